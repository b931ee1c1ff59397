import { largestIds } from './select';
import { checkInteger } from './validate';

/** Checks top-k: an integer ≥ 0, where 0 turns it off. */
export function checkTopK(k: unknown): number {
  return checkInteger('topK', k, { min: 0, max: Number.POSITIVE_INFINITY }, '0 turns it off');
}

/**
 * Top-k, in place: keeps exactly the k largest logits (among ties with the k-th, the lowest ids)
 * and sets the rest to -Infinity. k = 0 or k ≥ V keeps everything. Returns `logits`.
 */
export function applyTopK(logits: Float32Array, k: number): Float32Array {
  checkTopK(k);
  if (k === 0 || k >= logits.length) return logits;
  const keep = new Uint8Array(logits.length);
  for (const id of largestIds(logits, k)) keep[id] = 1;
  for (let i = 0; i < logits.length; i++) {
    if (keep[i] === 0) logits[i] = Number.NEGATIVE_INFINITY;
  }
  return logits;
}
