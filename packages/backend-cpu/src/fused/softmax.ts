import { type FusedKernels, type Shape, sizeOf } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { runRowKernel } from '../vectorised';
import { SOFTMAX_GRAD_KERNEL, SOFTMAX_KERNEL } from '../wasm/softmax-kernel';
import type { CpuKernelContext } from './kernel-context';

/** The maximum of the `cols` values of x from `o` on, and Σ e^(x - max) over them. */
export function rowExpSum(
  x: FloatArray,
  o: number,
  cols: number,
): { readonly max: number; readonly sum: number } {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < cols; i++) if (x[o + i] > max) max = x[o + i];
  let sum = 0;
  for (let i = 0; i < cols; i++) sum += Math.exp(x[o + i] - max);
  return { max, sum };
}

/** Softmax (or log-softmax) over rows of length `cols`, shifted by the row maximum. */
export function softmaxKernel(x: FloatArray, cols: number, log: boolean, out: FloatArray): void {
  const rows = cols === 0 ? 0 : x.length / cols;
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    const { max, sum } = rowExpSum(x, o, cols);
    if (log) {
      const lse = Math.log(sum);
      for (let i = 0; i < cols; i++) out[o + i] = x[o + i] - max - lse;
    } else {
      for (let i = 0; i < cols; i++) out[o + i] = Math.exp(x[o + i] - max) / sum;
    }
  }
}

/** Softmax's backward y (g - Σ g y) over rows of length `cols`, in float64 arithmetic. */
export function softmaxGradKernel(y: FloatArray, g: FloatArray, cols: number, out: FloatArray): void {
  const rows = cols === 0 ? 0 : y.length / cols;
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let dot = 0;
    for (let i = 0; i < cols; i++) dot += g[o + i] * y[o + i];
    for (let i = 0; i < cols; i++) out[o + i] = y[o + i] * (g[o + i] - dot);
  }
}

/**
 * Softmax over the last axis and its backward (the WebAssembly row kernels where the rows live in the heap, else
 * `softmaxKernel` and `softmaxGradKernel`), log-softmax in JavaScript.
 */
export function softmaxKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'softmax' | 'softmaxGrad' | 'logSoftmax'> {
  return {
    softmax: (x) =>
      ctx.out(sizeOf(x.shape), (o) => {
        const [rows, cols] = rowsOf(x.shape);
        if (!runRowKernel(ctx.settings, SOFTMAX_KERNEL, [ctx.get(x)], [], o, rows, cols)) {
          softmaxKernel(ctx.f32(x), cols, false, o.f32);
        }
      }),
    softmaxGrad: (y, grad) =>
      ctx.out(sizeOf(y.shape), (o) => {
        const [rows, cols] = rowsOf(y.shape);
        if (
          !runRowKernel(ctx.settings, SOFTMAX_GRAD_KERNEL, [ctx.get(y), ctx.get(grad)], [], o, rows, cols)
        ) {
          softmaxGradKernel(ctx.f32(y), ctx.f32(grad), cols, o.f32);
        }
      }),
    logSoftmax: (x) =>
      ctx.out(sizeOf(x.shape), (o) => softmaxKernel(ctx.f32(x), lastDim(x.shape), true, o.f32)),
  };
}

function lastDim(shape: Shape): number {
  return shape[shape.length - 1];
}

/** [rows, cols] of a tensor taken as rows of its last axis. */
function rowsOf(shape: Shape): [number, number] {
  const cols = lastDim(shape);
  return [cols === 0 ? 0 : sizeOf(shape) / cols, cols];
}
