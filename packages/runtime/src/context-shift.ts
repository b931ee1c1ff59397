/**
 * The tokens left after a context shift, as llama.cpp slides its window: of `tokens` (those the cache holds, then
 * those waiting to run), the first `keep` stay, the oldest half of the rest goes and the newest half stays.
 * Undefined when nothing can go because the kept lead is all there is.
 */
export function shiftedWindow(tokens: readonly number[], keep: number): number[] | undefined {
  const drop = Math.floor((tokens.length - keep) / 2);
  if (drop < 1) return undefined;
  return [...tokens.slice(0, keep), ...tokens.slice(keep + drop)];
}
