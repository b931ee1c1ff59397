import type { FusedKernels, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { normRows } from './norm-rows';

/** x * rsqrt(mean(x^2) + eps) * weight over the last axis, one workgroup per row. */
function rmsnorm(rt: GpuRuntime, x: TensorInfo, weight: TensorInfo, eps: number): GpuStorage {
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

/** (x - mean) * rsqrt(var + eps) * weight + bias over the last axis; mean and variance in two passes per row. */
function layernorm(
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

/** The norms, one workgroup per row (`normRows`); their backward passes run as composites. */
export function normKernels(rt: GpuRuntime): Pick<FusedKernels, 'rmsnorm' | 'layernorm'> {
  return {
    rmsnorm: (x, weight, eps) => rmsnorm(rt, x, weight, eps),
    layernorm: (x, weight, bias, eps) => layernorm(rt, x, weight, bias, eps),
  };
}
