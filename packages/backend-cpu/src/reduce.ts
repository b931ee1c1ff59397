import type { HostArray, ReduceDims, ReduceOp } from '@loom/tensor';

/**
 * Reduces x viewed as [outer, size, inner] over the middle axis. Sums accumulate in float64
 * so long f32 reductions keep their accuracy.
 */
export function reduceKernel(op: ReduceOp, x: HostArray, dims: ReduceDims, out: HostArray): void {
  const { outer, size, inner } = dims;
  for (let o = 0; o < outer; o++) {
    const base = o * size * inner;
    for (let j = 0; j < inner; j++) {
      let acc = op === 'sum' ? 0 : Number.NEGATIVE_INFINITY;
      for (let s = 0; s < size; s++) {
        const v = x[base + s * inner + j];
        if (op === 'sum') acc += v;
        else if (v > acc || Number.isNaN(v)) acc = v;
      }
      out[o * inner + j] = acc;
    }
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
