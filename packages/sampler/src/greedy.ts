/** Greedy choice: the id of the largest logit, the lowest id among ties. */
export function argmax(logits: Float32Array): number {
  let best = -1;
  let bestValue = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > bestValue) {
      bestValue = logits[i];
      best = i;
    }
  }
  if (best < 0) {
    throw new RangeError(`argmax: all ${logits.length} logits are -Infinity, so there is no token to choose`);
  }
  return best;
}
