import { checkFrequencyPresencePenalty } from './frequency-presence-penalty';
import { type LogitBias, logitBiasEntries } from './logit-bias';
import { checkTopLogprobs } from './logprobs';
import { checkMinP } from './min-p';
import { checkRepetitionPenalty } from './repetition-penalty';
import { MAX_SEED } from './rng';
import { checkTemperature } from './temperature';
import { checkPenaltyWindow } from './token-counts';
import { checkTopK } from './top-k';
import { checkTopP } from './top-p';
import { checkInteger, checkKnownFields } from './validate';

/** Sampler settings; every field is optional and off (or neutral) by default. */
export interface SamplerConfig {
  /** Added to logits before anything else: token id → bias in [-100, 100], -Infinity bans. */
  logitBias?: LogitBias;
  /** CTRL repetition penalty r > 0 over the seen tokens; default 1 (off). */
  repetitionPenalty?: number;
  /** OpenAI frequency penalty in [-2, 2]; default 0. */
  frequencyPenalty?: number;
  /** OpenAI presence penalty in [-2, 2]; default 0. */
  presencePenalty?: number;
  /** The penalties look at the last N seen tokens only; default: all seen tokens. */
  penaltyWindow?: number;
  /** ≥ 0; 0 is greedy (argmax, no random draw); default 1. */
  temperature?: number;
  /** Keep the k most likely tokens; 0 (default) turns it off. */
  topK?: number;
  /** Nucleus: keep the smallest set with probability ≥ p, in (0, 1]; default 1 (off). */
  topP?: number;
  /** Keep tokens with probability ≥ minP · p_max, in [0, 1]; default 0 (off). */
  minP?: number;
  /** Seed of the random generator, an integer in [0, 2^53 - 1]; default 0. */
  seed?: number;
  /** How many top alternatives `sample` returns with their log-probabilities; default 0. */
  topLogprobs?: number;
}

/** A validated `SamplerConfig` with every default filled in. */
export interface ResolvedSamplerConfig {
  readonly logitBias: ReadonlyMap<number, number>;
  readonly repetitionPenalty: number;
  readonly frequencyPenalty: number;
  readonly presencePenalty: number;
  readonly penaltyWindow: number | undefined;
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly minP: number;
  readonly seed: number;
  readonly topLogprobs: number;
}

const SAMPLER_CONFIG_FIELDS: readonly (keyof SamplerConfig)[] = [
  'logitBias',
  'repetitionPenalty',
  'frequencyPenalty',
  'presencePenalty',
  'penaltyWindow',
  'temperature',
  'topK',
  'topP',
  'minP',
  'seed',
  'topLogprobs',
];

/** Validates a config (a `SamplerConfigError` names the first bad field) and fills in defaults. */
export function resolveSamplerConfig(config: SamplerConfig = {}): ResolvedSamplerConfig {
  checkKnownFields('SamplerConfig', config, SAMPLER_CONFIG_FIELDS);
  return {
    logitBias: new Map(logitBiasEntries(config.logitBias ?? {})),
    repetitionPenalty: checkRepetitionPenalty(config.repetitionPenalty ?? 1),
    frequencyPenalty: checkFrequencyPresencePenalty('frequencyPenalty', config.frequencyPenalty ?? 0),
    presencePenalty: checkFrequencyPresencePenalty('presencePenalty', config.presencePenalty ?? 0),
    penaltyWindow: checkPenaltyWindow(config.penaltyWindow),
    temperature: checkTemperature(config.temperature ?? 1),
    topK: checkTopK(config.topK ?? 0),
    topP: checkTopP(config.topP ?? 1),
    minP: checkMinP(config.minP ?? 0),
    seed: checkInteger('seed', config.seed ?? 0, { min: 0, max: MAX_SEED }),
    topLogprobs: checkTopLogprobs(config.topLogprobs ?? 0),
  };
}
