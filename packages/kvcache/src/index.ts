export {
  type InferenceMemory,
  type InferenceMemoryOptions,
  type InferenceModelShape,
  inferenceMemory,
} from './inference-memory';
export { KVCache, type KVCacheModelShape, type KVCacheOptions, type KVPair } from './kv-cache';
export { type KVCacheSize, kvCacheBytes } from './kv-cache-bytes';
export { checkMemoryLimits, describeBytes, MemoryLimitError, type MemoryLimits } from './memory-limits';
