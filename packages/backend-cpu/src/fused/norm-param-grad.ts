import type { FusedKernels, TensorInfo } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import { onHeap } from '../vectorised';
import { NORM_PARAM_GRAD_KERNEL } from '../wasm/norm-param-grad-kernel';
import type { CpuKernelSettings } from '../wasm/settings';
import type { CpuKernelContext } from './kernel-context';

/**
 * Rows per partial sum: a fixed number, not one per thread, so the sums (added in row order within a part, then
 * part after part) have the same bits whatever the thread count.
 */
const ROWS_PER_PART = 128;
/** Estimated cost of one element (its statistics and the two sums), in microseconds. */
const MICROS_PER_ELEMENT = 0.002;

/**
 * The parameter gradients of a norm in JavaScript: out[0, d) = Σ_rows grad · n with n the normalised row, and for
 * LayerNorm (`centred`) out[d, 2d) = Σ_rows grad; row statistics and sums in float64.
 */
export function normParamGradKernel(
  x: FloatArray,
  grad: FloatArray,
  d: number,
  centred: boolean,
  eps: number,
  out: FloatArray,
): void {
  const rows = d === 0 ? 0 : x.length / d;
  const sums = new Float64Array(out.length);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mean = 0;
    if (centred) {
      for (let i = 0; i < d; i++) mean += x[o + i];
      mean /= d;
    }
    let ss = 0;
    for (let i = 0; i < d; i++) ss += (x[o + i] - mean) ** 2;
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) {
      sums[i] += grad[o + i] * (x[o + i] - mean) * inv;
      if (centred) sums[d + i] += grad[o + i];
    }
  }
  out.set(sums);
}

/**
 * The same by the WebAssembly kernel `norm_param_grad_f32`, parts of ROWS_PER_PART rows split across threads, each
 * into its own partial sums, then the parts added in order. Returns false, computing nothing, when the kernels are
 * off, an operand lives outside the heap or d is not a multiple of 4.
 */
function normParamGradInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  grad: CpuStorage,
  d: number,
  centred: boolean,
  eps: number,
  out: CpuStorage,
): boolean {
  const heap = onHeap(settings, [x, grad]);
  if (!heap || d % 4 !== 0 || d === 0) return false;
  const [xa, ga] = heap.addresses;
  const rows = x.length / d;
  const parts = Math.max(1, Math.ceil(rows / ROWS_PER_PART));
  const partials = new CpuStorage('f32', parts * 2 * d, false);
  try {
    const pa = partials.address;
    if (pa === undefined) return false;
    forkJoin(heap.runtime, settings.threads, NORM_PARAM_GRAD_KERNEL, x.length * MICROS_PER_ELEMENT, () =>
      Array.from({ length: parts }, (_, p) => {
        const first = p * ROWS_PER_PART;
        const count = Math.min(ROWS_PER_PART, rows - first);
        return [xa + 4 * first * d, ga + 4 * first * d, pa + 8 * p * d, count, d, centred ? 1 : 0, eps];
      }),
    );
    const [pv, ov] = [partials.f32, out.f32];
    for (let i = 0; i < ov.length; i++) {
      let sum = 0;
      for (let p = 0; p < parts; p++) sum += pv[2 * p * d + i];
      ov[i] = sum;
    }
    return true;
  } finally {
    partials.free();
  }
}

/** rmsnormWeightGrad and layernormParamGrad: the WebAssembly kernel where it runs, `normParamGradKernel` elsewhere. */
export function normParamGradKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'rmsnormWeightGrad' | 'layernormParamGrad'> {
  const run = (centred: boolean) => (x: TensorInfo, grad: TensorInfo, eps: number) => {
    const d = x.shape[x.shape.length - 1] ?? 0;
    return ctx.out((centred ? 2 : 1) * d, (o) => {
      const [xs, gs] = [ctx.get(x), ctx.get(grad)];
      if (!normParamGradInto(ctx.settings, xs, gs, d, centred, eps, o)) {
        normParamGradKernel(xs.f32, gs.f32, d, centred, eps, o.f32);
      }
    });
  };
  return { rmsnormWeightGrad: run(false), layernormParamGrad: run(true) };
}
