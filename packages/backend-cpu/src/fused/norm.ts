import { type DataId, type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import { normRowsInto } from '../norm-rows';
import type { FloatArray } from '../precision';
import type { CpuStorage } from '../storage';
import { NORM_KERNELS, type NormKernelName } from '../wasm/norm-kernel';
import type { CpuKernelSettings } from '../wasm/settings';
import type { CpuKernelContext } from './kernel-context';

/** 1 / sqrt(mean(x[o..o+d)²) + eps). */
function rmsScale(x: FloatArray, o: number, d: number, eps: number): number {
  let ss = 0;
  for (let i = 0; i < d; i++) ss += x[o + i] * x[o + i];
  return 1 / Math.sqrt(ss / d + eps);
}

/** The mean of x[o..o+d) and 1 / sqrt(variance + eps), written to stats[0] and stats[1]. */
function meanAndScale(x: FloatArray, o: number, d: number, eps: number, stats: Float64Array): void {
  let sum = 0;
  for (let i = 0; i < d; i++) sum += x[o + i];
  const mean = sum / d;
  let ss = 0;
  for (let i = 0; i < d; i++) {
    const c = x[o + i] - mean;
    ss += c * c;
  }
  stats[0] = mean;
  stats[1] = 1 / Math.sqrt(ss / d + eps);
}

/** x [rows, d] * rsqrt(mean(x^2) + eps) * weight [d]. */
export function rmsnormKernel(x: FloatArray, weight: FloatArray, eps: number, out: FloatArray): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    const inv = rmsScale(x, o, d, eps);
    for (let i = 0; i < d; i++) out[o + i] = x[o + i] * inv * weight[i];
  }
}

/**
 * out = rmsnorm(x, weight, eps) between storages, for fused kernels that normalise their input first: the row kernel
 * where `normRowsInto` takes the operands, else `rmsnormKernel`.
 */
export function rmsnormInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  weight: CpuStorage,
  eps: number,
  out: CpuStorage,
): void {
  if (!normRowsInto(settings, NORM_KERNELS.rmsnorm, [x], [weight], out, eps)) {
    rmsnormKernel(x.f32, weight.f32, eps, out.f32);
  }
}

/** (x - mean) * rsqrt(var + eps) * weight + bias over rows of length d. */
export function layernormKernel(
  x: FloatArray,
  weight: FloatArray,
  bias: FloatArray,
  eps: number,
  out: FloatArray,
): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  const stats = new Float64Array(2);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    meanAndScale(x, o, d, eps, stats);
    const mean = stats[0];
    const inv = stats[1];
    for (let i = 0; i < d; i++) out[o + i] = (x[o + i] - mean) * inv * weight[i] + bias[i];
  }
}

/** dx of rmsnorm for rows of length d: r (dn - n mean(dn n)) with n = x r, dn = grad * weight. */
export function rmsnormGradKernel(
  x: FloatArray,
  weight: FloatArray,
  grad: FloatArray,
  eps: number,
  out: FloatArray,
): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  for (let row = 0; row < rows; row++) {
    const o = row * d;
    const r = rmsScale(x, o, d, eps);
    let dot = 0;
    for (let i = 0; i < d; i++) dot += grad[o + i] * weight[i] * x[o + i] * r;
    const m = dot / d;
    for (let i = 0; i < d; i++) out[o + i] = r * (grad[o + i] * weight[i] - x[o + i] * r * m);
  }
}

/** dx of layernorm for rows of length d: r (dn - mean(dn) - n mean(dn n)), n = (x - mean) r. */
export function layernormGradKernel(
  x: FloatArray,
  weight: FloatArray,
  grad: FloatArray,
  eps: number,
  out: FloatArray,
): void {
  const d = weight.length;
  const rows = d === 0 ? 0 : x.length / d;
  const stats = new Float64Array(2);
  for (let row = 0; row < rows; row++) {
    const o = row * d;
    meanAndScale(x, o, d, eps, stats);
    const mean = stats[0];
    const r = stats[1];
    let sumDn = 0;
    let sumDnN = 0;
    for (let i = 0; i < d; i++) {
      const dn = grad[o + i] * weight[i];
      sumDn += dn;
      sumDnN += dn * (x[o + i] - mean) * r;
    }
    const meanDn = sumDn / d;
    const meanDnN = sumDnN / d;
    for (let i = 0; i < d; i++) {
      out[o + i] = r * (grad[o + i] * weight[i] - meanDn - (x[o + i] - mean) * r * meanDnN);
    }
  }
}

/**
 * A norm's output, shaped like x: the WebAssembly row kernel `kernel` over the storages of the
 * row inputs and weights where `normRowsInto` takes them, else `fallback`, a JavaScript kernel
 * above writing `out`. Called once per norm of every decode step, so it takes storages (no
 * per-call mapping of tensor infos).
 */
function normOutput(
  ctx: CpuKernelContext,
  kernel: NormKernelName,
  x: TensorInfo,
  rows: readonly CpuStorage[],
  weights: readonly CpuStorage[],
  eps: number,
  fallback: (out: FloatArray) => void,
): DataId {
  return ctx.out(sizeOf(x.shape), (o) => {
    if (!normRowsInto(ctx.settings, kernel, rows, weights, o, eps)) fallback(o.f32);
  });
}

/** The norms and their input gradients (`normOutput`). */
export function normKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'rmsnorm' | 'layernorm' | 'rmsnormGrad' | 'layernormGrad'> {
  return {
    rmsnorm: (x, w, eps) =>
      normOutput(ctx, NORM_KERNELS.rmsnorm, x, [ctx.get(x)], [ctx.get(w)], eps, (o) =>
        rmsnormKernel(ctx.f32(x), ctx.f32(w), eps, o),
      ),
    layernorm: (x, w, b, eps) =>
      normOutput(ctx, NORM_KERNELS.layernorm, x, [ctx.get(x)], [ctx.get(w), ctx.get(b)], eps, (o) =>
        layernormKernel(ctx.f32(x), ctx.f32(w), ctx.f32(b), eps, o),
      ),
    rmsnormGrad: (x, w, g, eps) =>
      normOutput(ctx, NORM_KERNELS.rmsnormGrad, x, [ctx.get(x), ctx.get(g)], [ctx.get(w)], eps, (o) =>
        rmsnormGradKernel(ctx.f32(x), ctx.f32(w), ctx.f32(g), eps, o),
      ),
    layernormGrad: (x, w, g, eps) =>
      normOutput(ctx, NORM_KERNELS.layernormGrad, x, [ctx.get(x), ctx.get(g)], [ctx.get(w)], eps, (o) =>
        layernormGradKernel(ctx.f32(x), ctx.f32(w), ctx.f32(g), eps, o),
      ),
  };
}
