import type { Tensor } from '@loom/tensor';

/**
 * Where attention keeps keys and values between calls (implemented by @loom/kvcache).
 * `update` stores the new k, v [B, T, numKvHeads, headDim] of `layer` at position `offset`
 * and returns keys and values [B, S, numKvHeads, headDim] laid out as its `layout` says. A plain
 * cache returns positions from 0 with S >= offset + T, the first offset + T filled (it may return its
 * whole preallocated storage: causal attention with this offset never reads past offset + T - 1).
 * The caller disposes what it returns.
 */
export interface KVStore {
  update(layer: number, k: Tensor, v: Tensor, offset: number): StoredKV;
  /**
   * For a step that writes its own keys and values (a fused attention step): counts positions offset..offset +
   * count - 1 of `layer` as stored and returns the layer's whole storage [B, S, numKvHeads, headDim], positions from
   * 0, for the caller to write them into before anything reads them; the caller disposes the views. Absent, or
   * undefined (nothing changed), where the store keeps another layout.
   */
  reserve?(layer: number, offset: number, count: number): StoredKV | undefined;
}

/**
 * How the keys a store returns are laid out:
 * - `positions`: in position order, the first at absolute position `start` (a plain cache: 0);
 * - `slots`: ring slots in any order, the first `filled` valid; together they are exactly the keys the one new
 *   query sees (a sliding-window ring after a one-token update).
 */
export type KVLayout =
  | { readonly kind: 'positions'; readonly start: number }
  | { readonly kind: 'slots'; readonly filled: number };

/** Keys and values [B, S, numKvHeads, headDim] from `KVStore.update`; an absent layout is positions from 0. */
export interface StoredKV {
  readonly k: Tensor;
  readonly v: Tensor;
  readonly layout?: KVLayout;
}

/** Position of the first new token and, for cached decoding, the store of past keys and values. */
export interface ForwardContext {
  readonly offset: number;
  readonly cache?: KVStore;
  /**
   * Prefix LM: the first `prefixLength` positions attend to each other bidirectionally, later ones causally
   * (absent or 0: causal). The whole prefix must be in the call that starts at offset 0.
   */
  readonly prefixLength?: number;
}
