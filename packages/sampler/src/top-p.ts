import { softmaxWeights } from './softmax';
import { checkNumber } from './validate';
import { workRow } from './work-rows';

/** Each pass that gathers too little probability lowers the candidate cutoff by this factor. */
const CUTOFF_STEP = 16;

/** Checks top-p: a number in (0, 1], where 1 turns it off. */
export function checkTopP(p: unknown): number {
  return checkNumber('topP', p, { min: 0, max: 1, minOpen: true }, '1 turns it off');
}

/**
 * Nucleus (top-p) sampling, in place: keeps the smallest set of tokens, most probable first
 * (ties: lowest id first), whose total probability is ≥ p, and sets the rest to -Infinity.
 * At least one token survives. Returns `logits`.
 *
 * Works on the weights w = exp(logit - max) against the target p · Σw. Instead of sorting all
 * V tokens it gathers the weights ≥ a cutoff, lowering the cutoff until they hold the target;
 * every token left out weighs less than every candidate, so the nucleus lies among the
 * candidates and only their weights are sorted, to find the smallest weight kept.
 */
export function applyTopP(logits: Float32Array, p: number): Float32Array {
  checkTopP(p);
  if (p === 1) return logits;
  const weights = workRow('weights', logits.length);
  const target = p * softmaxWeights(logits, weights);
  if (target === 0) {
    throw new RangeError(`applyTopP: all ${logits.length} logits are -Infinity, so there is nothing to keep`);
  }
  const count = logits.length;
  let possible = 0;
  for (let i = 0; i < count; i++) {
    if (weights[i] > 0) possible++;
  }
  const gathered = workRow('candidates', possible);
  let candidates = gathered.subarray(0, 0);
  for (let cutoff = 1; ; cutoff /= CUTOFF_STEP) {
    let size = 0;
    let mass = 0;
    for (let i = 0; i < count; i++) {
      if (weights[i] > 0 && weights[i] >= cutoff) {
        gathered[size++] = weights[i];
        mass += weights[i];
      }
    }
    candidates = gathered.subarray(0, size);
    if (mass >= target || size === possible) break;
  }
  candidates.sort();
  // Walk the candidates from the heaviest: `smallest` is the last weight the nucleus needs and
  // `tiesKept` how many tokens of exactly that weight it takes.
  let cumulative = 0;
  let smallest = candidates[candidates.length - 1];
  let tiesKept = 0;
  for (let i = candidates.length - 1; i >= 0; i--) {
    if (candidates[i] !== smallest) {
      smallest = candidates[i];
      tiesKept = 0;
    }
    tiesKept++;
    cumulative += candidates[i];
    if (cumulative >= target) break;
  }
  for (let i = 0; i < count; i++) {
    if (weights[i] > smallest) continue;
    if (weights[i] === smallest && tiesKept > 0) tiesKept--;
    else logits[i] = Number.NEGATIVE_INFINITY;
  }
  return logits;
}
