import type { AdamWSpec, FusedKernels } from '@loom/tensor';
import type { FloatArray } from '../precision';
import type { CpuStorage } from '../storage';
import { runVectorised } from '../vectorised';
import { ADAMW_KERNEL } from '../wasm/adamw-kernel';
import type { CpuKernelSettings } from '../wasm/settings';
import type { CpuKernelContext } from './kernel-context';

/**
 * AdamW in place: the WebAssembly SIMD kernel (f32 arithmetic) over the first n - n % 4
 * elements when all four storages live in the heap, the JavaScript kernel for the rest.
 */
export function adamwInPlace(
  settings: CpuKernelSettings,
  p: CpuStorage,
  g: CpuStorage,
  m: CpuStorage,
  v: CpuStorage,
  spec: AdamWSpec,
): void {
  const { lr, beta1, beta2, eps, weightDecay, c1, c2, gradScale = 1 } = spec;
  // The gradient's scale folds into the moments' factors: (1 - β1) s g and (1 - β2) s² g².
  const moments = [(1 - beta1) * gradScale, (1 - beta2) * gradScale * gradScale];
  const constants = [beta1, moments[0], beta2, moments[1], 1 - lr * weightDecay, lr / c1, 1 / c2, eps];
  const done = runVectorised(settings, ADAMW_KERNEL, [p, g, m, v], p.length, constants);
  const [pv, gv, mv, vv] = [p, g, m, v].map((s) => s.f32.subarray(done));
  if (pv.length > 0) adamwKernel(pv, gv, mv, vv, spec);
}

/** AdamW in place over every element (see FusedKernels.adamw). */
export function adamwKernel(
  p: FloatArray,
  g: FloatArray,
  m: FloatArray,
  v: FloatArray,
  spec: AdamWSpec,
): void {
  const { lr, beta1, beta2, eps, weightDecay, c1, c2, gradScale = 1 } = spec;
  const decay = 1 - lr * weightDecay;
  const step = lr / c1;
  const invC2 = 1 / c2;
  for (let i = 0; i < p.length; i++) {
    const gi = gradScale * g[i];
    const mi = beta1 * m[i] + (1 - beta1) * gi;
    const vi = beta2 * v[i] + (1 - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * decay - (mi * step) / (Math.sqrt(vi * invC2) + eps);
  }
}

/** AdamW, updating the parameter and both moments in place (`adamwInPlace`). */
export function adamwKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'adamw'> {
  return {
    adamw: (p, g, m, v, spec) =>
      adamwInPlace(ctx.settings, ctx.get(p), ctx.get(g), ctx.get(m), ctx.get(v), spec),
  };
}
