import { softmaxWeights } from './softmax';
import { checkNumber } from './validate';
import { workRow } from './work-rows';

/**
 * Draws a token by inverse CDF: with weights w_i = exp(logit_i - max) in float64, returns the
 * first id i (in ascending id order) whose cumulative weight exceeds u · Σw. `u` is a uniform
 * number in [0, 1), e.g. `rng.nextFloat()`. Banned (-Infinity) tokens are never drawn.
 */
export function sampleIndex(logits: Float32Array, u: number): number {
  checkNumber('u', u, { min: 0, max: 1, maxOpen: true });
  const weights = workRow('weights', logits.length);
  const total = softmaxWeights(logits, weights);
  return drawIndex(weights, logits.length, total, u);
}

/**
 * The draw of `sampleIndex` from weights already computed: the first of the `count` weights (ascending ids) whose
 * cumulative sum exceeds u · total, where total is their sum.
 */
export function drawIndex(weights: Float64Array, count: number, total: number, u: number): number {
  if (total === 0) {
    throw new RangeError(`sampleIndex: all ${count} logits are -Infinity, so there is no token to draw`);
  }
  const target = u * total;
  let cumulative = 0;
  let last = -1;
  for (let i = 0; i < count; i++) {
    if (weights[i] === 0) continue;
    cumulative += weights[i];
    last = i;
    if (cumulative > target) return i;
  }
  return last; // rounding left the running sum a hair below the target: the last drawable token
}
