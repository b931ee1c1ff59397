import type { Backend } from '@loom/tensor';
import { KVCache, type KVCacheModelShape } from './kv-cache';
import { RingKVCache } from './ring-kv-cache';

/** The cache a decoder generates with: a full `KVCache`, or a `RingKVCache` for a sliding-window model. */
export type ModelKVCache = KVCache | RingKVCache;

/** The fields of a model config `cacheForModel` sizes a cache from. */
export interface ModelKVCacheShape extends KVCacheModelShape {
  /** Sliding-window attention (Mistral): positions each token attends to; absent is full attention. */
  readonly slidingWindow?: number;
}

/** How many positions and sequences the cache serves, and where it lives. */
export interface ModelKVCacheOptions {
  /** Positions the sequence may reach (default: the model's maxSeqLen). */
  readonly capacity?: number;
  /** Sequences decoded together (default 1). */
  readonly batch?: number;
  /** Where the keys and values live (default: the current backend). */
  readonly backend?: Backend;
}

/**
 * The cache for decoding up to `capacity` positions with a model: a ring of `slidingWindow` slots when the model
 * has a window shorter than the capacity (its memory stays at W positions however long the sequence grows), else
 * a `KVCache` of `capacity` positions (no larger than the ring would be, and it can truncate anywhere).
 */
export function cacheForModel(config: ModelKVCacheShape, options: ModelKVCacheOptions = {}): ModelKVCache {
  const capacity = options.capacity ?? config.maxSeqLen;
  const { batch, backend } = options;
  if (config.slidingWindow !== undefined && config.slidingWindow < capacity) {
    return RingKVCache.forModel(config, { batch, backend });
  }
  return KVCache.forModel(config, { capacity, batch, backend });
}

/**
 * Whether `cache.truncate(length)` can go back to `length`: a `KVCache` to any stored length, a ring only while it
 * still holds the positions the window needs there (any length before it first wrapped, else only its length).
 */
export function canTruncate(cache: ModelKVCache, length: number): boolean {
  if (!Number.isInteger(length) || length < 0 || length > cache.length) return false;
  return cache instanceof KVCache || cache.length <= cache.window || length === cache.length;
}
