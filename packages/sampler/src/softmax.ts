/**
 * Softmax arithmetic over one row of logits, in float64. Logits are finite or -Infinity
 * (a banned token); -Infinity has probability 0.
 */

/** The largest logit, -Infinity when every token is banned. */
export function maxLogit(logits: Float32Array): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > max) max = logits[i];
  }
  return max;
}

/** log Σ exp(logits), computed stably around the maximum; -Infinity when every token is banned. */
export function logSumExp(logits: Float32Array): number {
  const max = maxLogit(logits);
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  return max + Math.log(sum);
}

/** Probabilities exp(logit - logSumExp) in float64; throws when every token is banned. */
export function softmax(logits: Float32Array): Float64Array {
  const max = maxLogit(logits);
  if (max === Number.NEGATIVE_INFINITY) {
    throw new RangeError('softmax: every logit is -Infinity, so there is no distribution to normalise');
  }
  const probs = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    probs[i] = Math.exp(logits[i] - max);
    sum += probs[i];
  }
  for (let i = 0; i < probs.length; i++) probs[i] /= sum;
  return probs;
}
