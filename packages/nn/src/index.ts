export { type AttentionMapOptions, attentionMap } from './attention-map';
export { type BatchSequence, forwardBatch } from './batched-forward';
export type {
  ConfigInput,
  ConfigSize,
  ModelOptions,
  NormPlacement,
  Preset,
  TransformerConfig,
} from './config';
export {
  CONFIG_LIMITS,
  configProblems,
  headDim,
  kvDim,
  makeConfig,
  PRESETS,
  qDim,
  qkvHasBias,
  validateConfig,
} from './config';
export type { MemoryEstimate } from './count';
export { memoryEstimate, parameterCount } from './count';
export { constantInit, normalInit, SeedSequence } from './init';
export type { ForwardContext, KVStore } from './kv-store';
export { type HeadProjections, SelfAttention } from './layers/attention';
export { DecoderBlock } from './layers/block';
export { Dropout } from './layers/dropout';
export { Embedding } from './layers/embedding';
export { GeluMLP, SwiGLUFeedForward } from './layers/feed-forward';
export { Linear, type LinearAdapter } from './layers/linear';
export { LayerNorm, RMSNorm } from './layers/norm';
export { RotaryEmbedding } from './layers/rotary';
export { LoraAdapter, type LoraAdapterOptions } from './lora/adapter';
export { loraParameterCount } from './lora/count';
export { applyLora, Lora, type LoraOptions, type LoraSettings } from './lora/lora';
export {
  checkLoraTargets,
  defaultLoraTargets,
  GPT2_LORA_TARGETS,
  type Gpt2LoraTarget,
  LLAMA_LORA_TARGETS,
  type LlamaLoraTarget,
  type LoraSite,
  type LoraTarget,
  loraSites,
  loraTargetShapes,
  loraTargetsOf,
} from './lora/targets';
export { Module } from './module';
export { GradAccumulator } from './optim/accumulate';
export type { AdamWOptions } from './optim/adamw';
export { AdamW } from './optim/adamw';
export { clipGradNorm } from './optim/clip';
export type { Optimizer } from './optim/optimizer';
export type { Schedule, WarmupCosineOptions } from './optim/schedule';
export { constantSchedule, warmupCosine } from './optim/schedule';
export type { SGDOptions } from './optim/sgd';
export { SGD } from './optim/sgd';
export { TransformerLM } from './transformer';
