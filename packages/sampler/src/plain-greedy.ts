import type { ResolvedSamplerConfig } from './sampler-config';

/**
 * Temperature 0 with no logit bias, penalties or log-probabilities: the token is the argmax of the raw logits and
 * nothing else of them matters, so a caller may take the argmax where the logits are (on the device).
 */
export function isPlainGreedy(config: ResolvedSamplerConfig): boolean {
  return (
    config.temperature === 0 &&
    config.logitBias.size === 0 &&
    config.repetitionPenalty === 1 &&
    config.frequencyPenalty === 0 &&
    config.presencePenalty === 0 &&
    config.topLogprobs === 0
  );
}
