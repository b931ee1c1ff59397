export { type AttentionMapModel, type AttentionMapOptions, attentionMap } from './attention-map';
export {
  type BatchSequence,
  forwardBatch,
  type SharedKVStorage,
  type SlotKVStore,
} from './batched-forward';
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
export { activeParameterCount, memoryEstimate, parameterCount } from './count';
export { type EncoderOptions, TransformerEncoder } from './encoder/encoder';
export { type MaskedBatch, type MaskingOptions, maskTokens } from './encoder/masking';
export { SPECIAL_TOKEN_COUNT, type SpecialTokens, specialTokensAfter } from './encoder/special-tokens';
export { constantInit, normalInit, SeedSequence } from './init';
export type { ForwardContext, KVLayout, KVStore, StoredKV } from './kv-store';
export { type HeadProjections, SelfAttention } from './layers/attention';
export { DecoderBlock } from './layers/block';
export { CrossAttention, type CrossKV } from './layers/cross-attention';
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
export * from './mamba/index';
export { Module } from './module';
export { loadBalancingLoss } from './moe/aux-loss';
export {
  DEFAULT_AUX_LOSS_COEF,
  DEFAULT_CAPACITY_FACTOR,
  expertCapacity,
  type MoeConfig,
  moeProblems,
} from './moe/config';
export { type Dispatch, dispatch } from './moe/dispatch';
export { MoeFeedForward, type MoeForward, type MoeStats } from './moe/moe';
export { type Routing, TopKRouter } from './moe/router';
export { GradAccumulator } from './optim/accumulate';
export type { AdamWOptions } from './optim/adamw';
export { AdamW } from './optim/adamw';
export { clipFactor, clipGradNorm, gradNorm, readClipFactor } from './optim/clip';
export type { Optimizer } from './optim/optimizer';
export type { Schedule, WarmupCosineOptions } from './optim/schedule';
export { constantSchedule, warmupCosine } from './optim/schedule';
export type { SGDOptions } from './optim/sgd';
export { SGD } from './optim/sgd';
export {
  ROPE_SCALING_TYPES,
  type RopeFrequencies,
  type RopeScaling,
  type RopeSpec,
  ropeFrequencies,
  ropeScalingProblems,
} from './rope-scaling';
export {
  type BeamOptions,
  beamSearch,
  beamSearchWith,
  type NextTokenLogProbs,
  type ScoredHypothesis,
} from './seq2seq/beam';
export {
  makeSeq2SeqConfig,
  type Seq2SeqConfig,
  seq2seqConfigProblems,
  validateSeq2SeqConfig,
} from './seq2seq/config';
export { CrossKVCache } from './seq2seq/cross-cache';
export { CrossDecoderBlock } from './seq2seq/decoder-block';
export { type ExactMatchOptions, type ExactMatchResult, exactMatch } from './seq2seq/exact-match';
export { type GreedyOptions, greedyDecode } from './seq2seq/greedy';
export type { Hypothesis } from './seq2seq/hypothesis';
export { EncoderDecoder } from './seq2seq/model';
export { sequenceLogProb } from './seq2seq/sequence-log-prob';
export {
  disposeBatch,
  IGNORE_INDEX,
  type Seq2SeqBatch,
  type Seq2SeqTokens,
  type SourceBatch,
  seq2seqBatch,
  sourceBatch,
  type TeacherForcedBatch,
  teacherForcing,
} from './seq2seq/teacher-forcing';
export {
  type Seq2SeqPair,
  TOY_TASKS,
  ToyTask,
  type ToyTaskName,
  type ToyTaskOptions,
} from './seq2seq/toy-task';
export { TransformerLM } from './transformer';
