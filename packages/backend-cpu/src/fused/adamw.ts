import type { AdamWSpec } from '@loom/tensor';
import type { FloatArray } from '../precision';

/** AdamW in place over every element (see FusedKernels.adamw). */
export function adamwKernel(
  p: FloatArray,
  g: FloatArray,
  m: FloatArray,
  v: FloatArray,
  spec: AdamWSpec,
): void {
  const { lr, beta1, beta2, eps, weightDecay, c1, c2 } = spec;
  const decay = 1 - lr * weightDecay;
  const step = lr / c1;
  const invC2 = 1 / c2;
  for (let i = 0; i < p.length; i++) {
    const gi = g[i];
    const mi = beta1 * m[i] + (1 - beta1) * gi;
    const vi = beta2 * v[i] + (1 - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * decay - (mi * step) / (Math.sqrt(vi * invC2) + eps);
  }
}
