import { countTokens } from './token-counts';
import { checkNumber } from './validate';

export interface RepetitionPenalty {
  /** The penalty r > 0; 1 turns it off, r > 1 discourages repeats. */
  penalty: number;
  /** Only the last `window` tokens count; undefined: all of them. */
  window?: number;
}

/** Checks a repetition penalty: a finite number > 0. */
export function checkRepetitionPenalty(penalty: unknown): number {
  return checkNumber(
    'repetitionPenalty',
    penalty,
    { min: 0, max: Number.POSITIVE_INFINITY, minOpen: true },
    '1 turns it off',
  );
}

/**
 * The CTRL / llama.cpp repetition penalty, in place: each distinct token seen in the window
 * has its logit divided by r when positive and multiplied by r otherwise, once however often
 * it occurred. Returns `logits`.
 */
export function applyRepetitionPenalty(
  logits: Float32Array,
  tokens: ArrayLike<number>,
  { penalty, window }: RepetitionPenalty,
): Float32Array {
  checkRepetitionPenalty(penalty);
  if (penalty === 1) return logits;
  for (const token of countTokens(tokens, window, logits.length).keys()) {
    const value = logits[token];
    logits[token] = value > 0 ? value / penalty : value * penalty;
  }
  return logits;
}
