import type { HostArray, ReduceDims, ReduceOp } from '@loom/tensor';

/**
 * Reduces x viewed as [outer, size, inner] over the middle axis. Sums accumulate in float64
 * so long f32 reductions keep their accuracy.
 */
export function reduceKernel(op: ReduceOp, x: HostArray, dims: ReduceDims, out: HostArray): void {
  const { outer, size, inner } = dims;
  const acc = new Float64Array(inner);
  for (let o = 0; o < outer; o++) {
    const base = o * size * inner;
    if (op === 'sum') {
      acc.fill(0);
      for (let s = 0; s < size; s++) {
        const row = base + s * inner;
        for (let j = 0; j < inner; j++) acc[j] += x[row + j];
      }
    } else {
      acc.fill(Number.NEGATIVE_INFINITY);
      for (let s = 0; s < size; s++) {
        const row = base + s * inner;
        for (let j = 0; j < inner; j++) {
          const v = x[row + j];
          if (v > acc[j] || Number.isNaN(v)) acc[j] = v;
        }
      }
    }
    for (let j = 0; j < inner; j++) out[o * inner + j] = acc[j];
  }
}

/** Index of the first maximum along the middle axis of [outer, size, inner]. */
export function argmaxKernel(x: HostArray, dims: ReduceDims, out: Int32Array): void {
  const { outer, size, inner } = dims;
  for (let o = 0; o < outer; o++) {
    const base = o * size * inner;
    for (let j = 0; j < inner; j++) {
      let best = 0;
      let bestValue = x[base + j];
      for (let s = 1; s < size; s++) {
        const v = x[base + s * inner + j];
        if (v > bestValue) {
          bestValue = v;
          best = s;
        }
      }
      out[o * inner + j] = best;
    }
  }
}
