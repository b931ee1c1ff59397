import type { HostArray, ReduceDims, ReduceOp } from '@loom/tensor';

/**
 * Reduces x viewed as [outer, size, inner] over the middle axis. Sums accumulate in float64
 * so long f32 reductions keep their accuracy.
 */
export function reduceKernel(op: ReduceOp, x: HostArray, dims: ReduceDims, out: HostArray): void {
  const { outer, size, inner } = dims;
  if (inner === 1) {
    reduceRows(op, x, outer, size, out);
    return;
  }
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

/** Reduces each contiguous row of `size` values. */
function reduceRows(op: ReduceOp, x: HostArray, rows: number, size: number, out: HostArray): void {
  for (let r = 0; r < rows; r++) {
    const base = r * size;
    let acc = op === 'sum' ? 0 : Number.NEGATIVE_INFINITY;
    if (op === 'sum') {
      for (let s = 0; s < size; s++) acc += x[base + s];
    } else {
      for (let s = 0; s < size; s++) {
        const v = x[base + s];
        if (v > acc || Number.isNaN(v)) acc = v;
      }
    }
    out[r] = acc;
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
