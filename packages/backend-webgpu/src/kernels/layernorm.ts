import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { normRows } from './norm-rows';

/** (x - mean) * rsqrt(var + eps) * weight + bias over the last axis; mean and variance in two passes per row. */
export function layernorm(
  rt: GpuRuntime,
  x: TensorInfo,
  weight: TensorInfo,
  bias: TensorInfo,
  eps: number,
): GpuStorage {
  return normRows(
    rt,
    'layernorm',
    x,
    { weight, bias },
    eps,
    (wg) => `  var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) { s += x[base + j]; }
  let mean = sum_all(s, lid) / f32(p.width);
  var q = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let c = x[base + j] - mean;
    q += c * c;
  }
  let inv = 1.0 / sqrt(sum_all(q, lid) / f32(p.width) + p.eps);
  for (var j = lid; j < p.width; j += ${wg}u) {
    out[base + j] = (x[base + j] - mean) * inv * weight[j] + bias[j];
  }`,
  );
}
