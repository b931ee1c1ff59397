import { checkInteger, checkTokenId } from './validate';

/** Checks a penalty window: an integer ≥ 1 (the last N tokens), or undefined for every token. */
export function checkPenaltyWindow(window: unknown): number | undefined {
  if (window === undefined) return undefined;
  return checkInteger(
    'penaltyWindow',
    window,
    { min: 1, max: Number.POSITIVE_INFINITY },
    'omit it for all tokens',
  );
}

/**
 * How often each token occurs among the last `window` entries of `tokens` (all of them when
 * `window` is undefined); every id must index a logit row of `vocabSize` entries.
 */
export function countTokens(
  tokens: ArrayLike<number>,
  window: number | undefined,
  vocabSize: number,
): Map<number, number> {
  checkPenaltyWindow(window);
  const start = window === undefined ? 0 : Math.max(0, tokens.length - window);
  const counts = new Map<number, number>();
  for (let i = start; i < tokens.length; i++) {
    const token = checkTokenId('the token history', tokens[i], vocabSize);
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return counts;
}
