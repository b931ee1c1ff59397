import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { normRows } from './norm-rows';

/** x * rsqrt(mean(x^2) + eps) * weight over the last axis, one workgroup per row. */
export function rmsnorm(rt: GpuRuntime, x: TensorInfo, weight: TensorInfo, eps: number): GpuStorage {
  return normRows(
    rt,
    'rmsnorm',
    x,
    { weight },
    eps,
    (wg) => `  var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let v = x[base + j];
    s += v * v;
  }
  s = sum_all(s, lid);
  let inv = 1.0 / sqrt(s / f32(p.width) + p.eps);
  for (var j = lid; j < p.width; j += ${wg}u) { out[base + j] = x[base + j] * inv * weight[j]; }`,
  );
}
