import { largestIds, sortByValueDescending } from './select';
import { logSumExp } from './softmax';
import { checkInteger } from './validate';

/** A token and its log-probability (natural log). */
export interface TokenLogprob {
  token: number;
  logprob: number;
}

/** Checks a number of top alternatives: an integer ≥ 0. */
export function checkTopLogprobs(n: unknown): number {
  return checkInteger('topLogprobs', n, { min: 0, max: Number.POSITIVE_INFINITY }, '0 turns it off');
}

/**
 * The `n` most probable tokens of the distribution softmax(logits) with their log-probabilities,
 * most probable first (ties: lowest id first); banned (-Infinity) tokens are left out, so fewer
 * than `n` come back when fewer are possible.
 */
export function topLogprobs(logits: Float32Array, n: number): TokenLogprob[] {
  checkTopLogprobs(n);
  if (n === 0) return [];
  const lse = logSumExp(logits);
  const ids = largestIds(logits, Math.min(n, logits.length)).filter(
    (id) => logits[id] !== Number.NEGATIVE_INFINITY,
  );
  return sortByValueDescending(ids, logits).map((token) => ({ token, logprob: logits[token] - lse }));
}
