import { maxLogit } from './softmax';
import { checkNumber } from './validate';

/** Checks min-p: a number in [0, 1], where 0 turns it off. */
export function checkMinP(minP: unknown): number {
  return checkNumber('minP', minP, { min: 0, max: 1 }, '0 turns it off');
}

/**
 * Min-p, in place: keeps the tokens whose probability is ≥ minP · p_max and sets the rest to
 * -Infinity. Computed on logits as logit - max ≥ ln(minP), the same test without a softmax;
 * the most probable token always survives. Returns `logits`.
 */
export function applyMinP(logits: Float32Array, minP: number): Float32Array {
  checkMinP(minP);
  if (minP === 0) return logits;
  const max = maxLogit(logits);
  const threshold = Math.log(minP);
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] - max < threshold) logits[i] = Number.NEGATIVE_INFINITY;
  }
  return logits;
}
