import type { Tensor } from '@loom/tensor';

/**
 * Where attention keeps keys and values between calls (implemented by @loom/kvcache).
 * `update` stores the new k, v [B, T, numKvHeads, headDim] of `layer` at position `offset`
 * and returns keys and values [B, S, numKvHeads, headDim] with S >= offset + T whose first
 * offset + T positions hold every key and value so far (a cache may return its whole
 * preallocated storage: causal attention with this offset never reads past offset + T - 1).
 * The caller disposes what it returns.
 */
export interface KVStore {
  update(layer: number, k: Tensor, v: Tensor, offset: number): { k: Tensor; v: Tensor };
}

/** Position of the first new token and, for cached decoding, the store of past keys and values. */
export interface ForwardContext {
  readonly offset: number;
  readonly cache?: KVStore;
}
