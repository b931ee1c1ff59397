export {
  type InferenceMemory,
  type InferenceMemoryOptions,
  type InferenceModelShape,
  inferenceMemory,
  kvPositions,
} from './inference-memory';
export { KVCache, type KVCacheModelShape, type KVCacheOptions, type KVPair } from './kv-cache';
export { type KVCacheSize, kvCacheBytes } from './kv-cache-bytes';
export { checkMemoryLimits, describeBytes, MemoryLimitError, type MemoryLimits } from './memory-limits';
export {
  cacheForModel,
  canTruncate,
  type ModelKVCache,
  type ModelKVCacheOptions,
  type ModelKVCacheShape,
} from './model-kv-cache';
export {
  RingKVCache,
  type RingKVCacheModelShape,
  type RingKVCacheOptions,
  type RingKVPair,
} from './ring-kv-cache';
export { KVSlot, SlotKVCache, type SlotKVCacheOptions } from './slot-kv-cache';
