/**
 * Softmax arithmetic over one row of logits, in float64. Logits are finite or -Infinity
 * (a banned token); -Infinity has probability 0 and costs no exp.
 */

const BANNED = Number.NEGATIVE_INFINITY;

/** The largest logit, -Infinity when every token is banned. */
export function maxLogit(logits: Float32Array): number {
  let max = BANNED;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > max) max = logits[i];
  }
  return max;
}

/**
 * Unnormalised probabilities exp(logit - max) in float64 (the largest is 1), written into `out`;
 * returns their sum, 0 when every token is banned. `max` is the row's largest logit.
 */
export function softmaxWeights(logits: Float32Array, out: Float64Array, max = maxLogit(logits)): number {
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const weight = logits[i] === BANNED ? 0 : Math.exp(logits[i] - max);
    out[i] = weight;
    sum += weight;
  }
  return sum;
}

/** log Σ exp(logits), computed stably around the maximum; -Infinity when every token is banned. */
export function logSumExp(logits: Float32Array): number {
  const max = maxLogit(logits);
  if (max === BANNED) return max;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] !== BANNED) sum += Math.exp(logits[i] - max);
  }
  return max + Math.log(sum);
}

/** Probabilities exp(logit - logSumExp) in float64; throws when every token is banned. */
export function softmax(logits: Float32Array): Float64Array {
  const probs = new Float64Array(logits.length);
  const sum = softmaxWeights(logits, probs);
  if (sum === 0) {
    throw new RangeError('softmax: every logit is -Infinity, so there is no distribution to normalise');
  }
  for (let i = 0; i < probs.length; i++) probs[i] /= sum;
  return probs;
}
