export { SamplerConfigError } from './config-error';
export {
  applyFrequencyPresencePenalties,
  type FrequencyPresencePenalties,
  MAX_FREQUENCY_PRESENCE_PENALTY,
} from './frequency-presence-penalty';
export { argmax } from './greedy';
export { applyLogitBias, type LogitBias, MAX_LOGIT_BIAS } from './logit-bias';
export { type TokenLogprob, topLogprobs } from './logprobs';
export { applyMinP } from './min-p';
export { penalizeLogits, processLogits, warpLogits } from './pipeline';
export { isPlainGreedy } from './plain-greedy';
export { applyRepetitionPenalty, type RepetitionPenalty } from './repetition-penalty';
export { MAX_SEED, Rng } from './rng';
export { sampleIndex } from './sample-index';
export { type SampleResult, Sampler } from './sampler';
export { type ResolvedSamplerConfig, resolveSamplerConfig, type SamplerConfig } from './sampler-config';
export { kthLargest, largestIds } from './select';
export { logSumExp, maxLogit, softmax } from './softmax';
export { type ResolvedStopConfig, resolveStopConfig, type StopConfig } from './stop-config';
export type { StopReason } from './stop-reason';
export { StopStringMatcher, type StopStringStep } from './stop-string-matcher';
export { StoppingCriteria, type StopStep } from './stopping-criteria';
export { applyTemperature } from './temperature';
export { countTokens } from './token-counts';
export { applyTopK } from './top-k';
export { applyTopP } from './top-p';
