import { sortByValueDescending } from './select';
import { softmax } from './softmax';
import { checkNumber } from './validate';

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
 * Instead of sorting all V tokens it gathers the candidates with probability ≥ a cutoff,
 * lowering the cutoff until they hold at least p; every token left out is less probable than
 * every candidate, so the nucleus lies among the candidates and only they are sorted.
 */
export function applyTopP(logits: Float32Array, p: number): Float32Array {
  checkTopP(p);
  if (p === 1) return logits;
  const probs = softmax(logits);
  let possible = 0;
  let cutoff = 0;
  for (const prob of probs) {
    if (prob > 0) possible++;
    if (prob > cutoff) cutoff = prob;
  }
  let candidates: number[] = [];
  for (;;) {
    candidates = [];
    let mass = 0;
    for (let i = 0; i < probs.length; i++) {
      if (probs[i] > 0 && probs[i] >= cutoff) {
        candidates.push(i);
        mass += probs[i];
      }
    }
    if (mass >= p || candidates.length === possible) break;
    cutoff /= CUTOFF_STEP;
  }
  sortByValueDescending(candidates, probs);
  const keep = new Uint8Array(logits.length);
  let cumulative = 0;
  for (const id of candidates) {
    keep[id] = 1;
    cumulative += probs[id];
    if (cumulative >= p) break;
  }
  for (let i = 0; i < logits.length; i++) {
    if (keep[i] === 0) logits[i] = Number.NEGATIVE_INFINITY;
  }
  return logits;
}
