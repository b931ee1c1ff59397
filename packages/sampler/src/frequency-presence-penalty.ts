import { countTokens } from './token-counts';
import { checkNumber } from './validate';

export interface FrequencyPresencePenalties {
  /** Subtracted once per occurrence of a token in the window. */
  frequency: number;
  /** Subtracted once from every token that occurs in the window. */
  presence: number;
  /** Only the last `window` tokens count; undefined: all of them. */
  window?: number;
}

/** The range of both penalties, as in the OpenAI API: [-2, 2]. */
export const MAX_FREQUENCY_PRESENCE_PENALTY = 2;

/** Checks a frequency or presence penalty: a number in [-2, 2]. */
export function checkFrequencyPresencePenalty(field: string, value: unknown): number {
  return checkNumber(
    field,
    value,
    { min: -MAX_FREQUENCY_PRESENCE_PENALTY, max: MAX_FREQUENCY_PRESENCE_PENALTY },
    '0 turns it off',
  );
}

/**
 * OpenAI frequency and presence penalties, in place:
 * logit[t] -= count[t] · frequency + (count[t] > 0) · presence, with counts over the window.
 * Returns `logits`.
 */
export function applyFrequencyPresencePenalties(
  logits: Float32Array,
  tokens: ArrayLike<number>,
  { frequency, presence, window }: FrequencyPresencePenalties,
): Float32Array {
  checkFrequencyPresencePenalty('frequencyPenalty', frequency);
  checkFrequencyPresencePenalty('presencePenalty', presence);
  if (frequency === 0 && presence === 0) return logits;
  for (const [token, count] of countTokens(tokens, window, logits.length)) {
    logits[token] -= count * frequency + presence;
  }
  return logits;
}
