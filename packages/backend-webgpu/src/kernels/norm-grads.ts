import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { normRows, normRowsParams } from './norm-rows';
import { entryPoint, makeProgram } from './program';

/** Which norm a backward kernel differentiates: LayerNorm centres the row, RMSNorm does not. */
type NormKind = 'layer' | 'rms';

/**
 * WGSL of one row's mean (0 for RMSNorm) and inverse root r = 1 / sqrt(mean((x - mean)²) + eps), as the
 * forward kernels compute them, left in `mean` and `r` on every thread.
 */
function statsCode(kind: NormKind, wg: number): string {
  const mean =
    kind === 'layer'
      ? `var s = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) { s += x[base + j]; }
  let mean = sum_all(s, lid) / f32(p.width);`
      : 'let mean = 0.0;';
  return `${mean}
  var q = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let c = x[base + j] - mean;
    q += c * c;
  }
  let r = 1.0 / sqrt(sum_all(q, lid) / f32(p.width) + p.eps);`;
}

/**
 * The input gradient of a norm, one workgroup per row: with n = (x - mean) r and dn = grad · weight,
 * dx = r (dn - mean(dn) - n mean(dn n)) for LayerNorm, r (dn - n mean(dn n)) for RMSNorm.
 */
function normGrad(
  rt: GpuRuntime,
  kind: NormKind,
  x: TensorInfo,
  weight: TensorInfo,
  grad: TensorInfo,
  eps: number,
): GpuStorage {
  return normRows(rt, `${kind}normGrad`, x, { weight, grad }, eps, (wg) => {
    const centre = kind === 'layer' ? ' - meanDn' : '';
    return `  ${statsCode(kind, wg)}
  var a = 0.0;
  var b = 0.0;
  for (var j = lid; j < p.width; j += ${wg}u) {
    let dn = grad[base + j] * weight[j];
    a += dn;
    b += dn * (x[base + j] - mean) * r;
  }
  let meanDn = sum_all(a, lid) / f32(p.width);
  let meanDnN = sum_all(b, lid) / f32(p.width);
  for (var j = lid; j < p.width; j += ${wg}u) {
    let dn = grad[base + j] * weight[j];
    out[base + j] = r * (dn${centre} - (x[base + j] - mean) * r * meanDnN);
  }`;
  });
}

/**
 * The parameter gradients of a norm in two dispatches: each row's mean and r (a workgroup per row, [rows, 2]),
 * then a thread per column adding over the rows in order grad · n (the weight's gradient) and, for LayerNorm,
 * grad (the bias's, in a second row: [2, d]).
 */
function normParamGrad(
  rt: GpuRuntime,
  kind: NormKind,
  x: TensorInfo,
  grad: TensorInfo,
  eps: number,
): GpuStorage {
  const width = x.shape[x.shape.length - 1];
  const rows = width === 0 ? 0 : sizeOf(x.shape) / width;
  const outRows = kind === 'layer' ? 2 : 1;
  const out = rt.alloc(outRows * width, 'f32');
  if (width === 0) return out;
  const stats = normRows(
    rt,
    `${kind}normRowStats`,
    x,
    {},
    eps,
    (wg) => `  ${statsCode(kind, wg)}
  if (lid == 0u) {
    out[2u * gid] = mean;
    out[2u * gid + 1u] = r;
  }`,
    2,
  ); // [rows, 2]: mean, r
  const wg = rt.limits.workgroupSize;
  // LayerNorm's bias gradient: the column sums of grad, the output's second row.
  const [biasStart, biasSum, biasOut] =
    kind === 'layer' ? ['var db = 0.0;', 'db += grad[i];', 'out[p.width + j] = db;'] : ['', '', ''];
  rt.launch({
    program: makeProgram(
      `${kind}normParamGrad:${wg}`,
      [
        { name: 'x', type: 'f32' },
        { name: 'grad', type: 'f32' },
        { name: 'stats', type: 'f32' },
      ],
      [{ name: 'out', type: 'f32' }],
      normRowsParams,
      () => `${entryPoint(wg)}
  let j = gid * ${wg}u + lid;
  if (j >= p.width) { return; }
  var dw = 0.0;
  ${biasStart}
  for (var row = 0u; row < p.rows; row++) {
    let i = row * p.width + j;
    dw += grad[i] * ((x[i] - stats[2u * row]) * stats[2u * row + 1u]);
    ${biasSum}
  }
  out[j] = dw;
  ${biasOut}
}`,
    ),
    inputs: [rt.storage(x.id), rt.storage(grad.id), stats],
    outputs: [out],
    params: normRowsParams.pack({ rows, width, eps }),
    workgroups: Math.ceil(width / wg),
  });
  rt.release(stats);
  return out;
}

/** The norms' backward passes (`normGrad` and `normParamGrad` above). */
export function normGradKernels(
  rt: GpuRuntime,
): Pick<FusedKernels, 'layernormGrad' | 'rmsnormGrad' | 'layernormParamGrad' | 'rmsnormWeightGrad'> {
  return {
    layernormGrad: (x, weight, grad, eps) => normGrad(rt, 'layer', x, weight, grad, eps),
    rmsnormGrad: (x, weight, grad, eps) => normGrad(rt, 'rms', x, weight, grad, eps),
    layernormParamGrad: (x, grad, eps) => normParamGrad(rt, 'layer', x, grad, eps),
    rmsnormWeightGrad: (x, grad, eps) => normParamGrad(rt, 'rms', x, grad, eps),
  };
}
