import { applyFrequencyPresencePenalties } from './frequency-presence-penalty';
import { applyLogitBias } from './logit-bias';
import { applyMinP } from './min-p';
import { applyRepetitionPenalty } from './repetition-penalty';
import type { ResolvedSamplerConfig } from './sampler-config';
import { applyTemperature } from './temperature';
import { applyTopK } from './top-k';
import { applyTopP } from './top-p';

/**
 * The fixed processor order, in two stages:
 *
 *  1. penalties — logit bias → repetition penalty → frequency/presence penalties. Log-probabilities
 *     are reported for the distribution after this stage.
 *  2. warpers — temperature → top-k → top-p → min-p. The token is drawn after this stage.
 *
 * All functions work in place on one row of logits and return it.
 */

/** Stage 1: logit bias, then the repetition penalty, then frequency/presence penalties over `history`. */
export function penalizeLogits(
  logits: Float32Array,
  config: ResolvedSamplerConfig,
  history: ArrayLike<number>,
): Float32Array {
  applyLogitBias(logits, config.logitBias);
  applyRepetitionPenalty(logits, history, {
    penalty: config.repetitionPenalty,
    window: config.penaltyWindow,
  });
  return applyFrequencyPresencePenalties(logits, history, {
    frequency: config.frequencyPenalty,
    presence: config.presencePenalty,
    window: config.penaltyWindow,
  });
}

/** Stage 2: temperature, then top-k, top-p and min-p. */
export function warpLogits(logits: Float32Array, config: ResolvedSamplerConfig): Float32Array {
  applyTemperature(logits, config.temperature);
  applyTopK(logits, config.topK);
  applyTopP(logits, config.topP);
  return applyMinP(logits, config.minP);
}

/** Both stages in order: the distribution the sampler draws from. */
export function processLogits(
  logits: Float32Array,
  config: ResolvedSamplerConfig,
  history: ArrayLike<number>,
): Float32Array {
  return warpLogits(penalizeLogits(logits, config, history), config);
}
