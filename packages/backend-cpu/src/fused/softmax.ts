import type { FloatArray } from '../precision';

/** Softmax (or log-softmax) over rows of length `cols`, shifted by the row maximum. */
export function softmaxKernel(x: FloatArray, cols: number, log: boolean, out: FloatArray): void {
  const rows = cols === 0 ? 0 : x.length / cols;
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < cols; i++) if (x[o + i] > max) max = x[o + i];
    let sum = 0;
    for (let i = 0; i < cols; i++) sum += Math.exp(x[o + i] - max);
    if (log) {
      const lse = Math.log(sum);
      for (let i = 0; i < cols; i++) out[o + i] = x[o + i] - max - lse;
    } else {
      for (let i = 0; i < cols; i++) out[o + i] = Math.exp(x[o + i] - max) / sum;
    }
  }
}

/**
 * Mean of -log softmax(logits [N, V])[target] over rows whose target is not `ignoreIndex`; a
 * target outside [0, V) that is not ignored counts as a row with loss 0 (as the composite does).
 */
export function crossEntropyKernel(
  logits: FloatArray,
  targets: Int32Array,
  vocab: number,
  ignoreIndex: number,
): number {
  let total = 0;
  let count = 0;
  for (let r = 0; r < targets.length; r++) {
    const target = targets[r];
    if (target === ignoreIndex) continue;
    count++;
    const o = r * vocab;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < vocab; i++) if (logits[o + i] > max) max = logits[o + i];
    let sum = 0;
    for (let i = 0; i < vocab; i++) sum += Math.exp(logits[o + i] - max);
    if (target >= 0 && target < vocab) total += Math.log(sum) - (logits[o + target] - max);
  }
  return total / Math.max(count, 1);
}
