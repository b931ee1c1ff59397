import type { FusedKernels, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout().scalar('count', 'u32').scalar('steps', 'u32').scalar('channels', 'u32');

/**
 * Mamba's selective scan: x, Δ [B, T, D], A [D, N], B, C [B, T, N], D [D] → y [B, T, D]. One
 * thread per (batch row, channel), parallel over B × D; each walks the T steps in order with
 * its state h [N] in registers (N is baked into the shader). Sequential in T: inference and
 * the small models Loom trains have B × D in the thousands, enough to fill the device, and a
 * chunked associative scan would cost log T passes over a [B, T, D, N] buffer.
 */
function selectiveScan(
  rt: GpuRuntime,
  x: TensorInfo,
  delta: TensorInfo,
  a: TensorInfo,
  b: TensorInfo,
  c: TensorInfo,
  dSkip: TensorInfo,
): GpuStorage {
  const [batch, steps, channels] = x.shape;
  const n = a.shape[1];
  const out = rt.alloc(batch * steps * channels, 'f32');
  const count = batch * channels;
  const wg = rt.limits.workgroupSize;
  const program = makeProgram(
    `selectiveScan:${n}:${wg}`,
    ['x', 'delta', 'a', 'b', 'c', 'dSkip'].map((name) => ({ name, type: 'f32' })),
    [{ name: 'out', type: 'f32' }],
    params,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }
  let bi = i / p.channels;
  let di = i % p.channels;
  var h: array<f32, ${n}>;
  for (var t = 0u; t < p.steps; t++) {
    let at = (bi * p.steps + t) * p.channels + di;
    let row = (bi * p.steps + t) * ${n}u;
    let dt = delta[at];
    let u = dt * x[at];
    var y = 0.0;
    for (var k = 0u; k < ${n}u; k++) {
      h[k] = exp(dt * a[di * ${n}u + k]) * h[k] + u * b[row + k];
      y += c[row + k] * h[k];
    }
    out[at] = y + dSkip[di] * x[at];
  }
}`,
  );
  rt.launch({
    program,
    inputs: [x, delta, a, b, c, dSkip].map((t) => rt.storage(t.id)),
    outputs: [out],
    params: params.pack({ count, steps, channels }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}

const gradParams = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('batch', 'u32')
  .scalar('steps', 'u32')
  .scalar('channels', 'u32')
  .scalar('n', 'u32');

/**
 * The gradients of the selective scan for g [B, T, D], packed as selectiveScanGrad returns them
 * (dx, dΔ [B, T, D], dA [D, N], dB, dC [B, T, N], dD [D]). Two kernels, within 8 storage buffers
 * each: the first, one thread per (batch row, channel), walks the steps forward storing h_t,
 * then backward with the adjoint dh [N] in registers, writing dx and dΔ and its shares of
 * dB, dC (to be summed over channels) and dA, dD (over batch rows) into a work buffer; the
 * second sums the shares, one thread per packed output element.
 */
function selectiveScanGrad(
  rt: GpuRuntime,
  x: TensorInfo,
  delta: TensorInfo,
  a: TensorInfo,
  b: TensorInfo,
  c: TensorInfo,
  dSkip: TensorInfo,
  g: TensorInfo,
): GpuStorage {
  const [batch, steps, channels] = x.shape;
  const n = a.shape[1];
  const btd = batch * steps * channels;
  const wg = rt.limits.workgroupSize;
  // work: dx, dΔ [B, T, D] | dB shares, dC shares (h_t until overwritten) [B, T, D, N] | dA shares [B, D, N] | dD shares [B, D]
  const work = rt.alloc(2 * btd + 2 * btd * n + batch * channels * n + batch * channels, 'f32');
  const layout = `
  let dBp = 2u * p.batch * p.steps * p.channels;
  let dCp = dBp + p.batch * p.steps * p.channels * p.n;
  let dAp = dCp + p.batch * p.steps * p.channels * p.n;
  let dDp = dAp + p.batch * p.channels * p.n;`;
  const shares = makeProgram(
    `selectiveScanGrad:shares:${n}:${wg}`,
    ['x', 'delta', 'a', 'b', 'c', 'dSkip', 'g'].map((name) => ({ name, type: 'f32' })),
    [{ name: 'work', type: 'f32' }],
    gradParams,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.batch * p.channels) { return; }
  let bi = i / p.channels;
  let di = i % p.channels;${layout}
  let btd = p.batch * p.steps * p.channels;
  var h: array<f32, ${n}>;
  for (var t = 0u; t < p.steps; t++) {
    let at = (bi * p.steps + t) * p.channels + di;
    let row = (bi * p.steps + t) * ${n}u;
    let u = delta[at] * x[at];
    for (var k = 0u; k < ${n}u; k++) {
      h[k] = exp(delta[at] * a[di * ${n}u + k]) * h[k] + u * b[row + k];
      work[dCp + at * ${n}u + k] = h[k];
    }
  }
  var dh: array<f32, ${n}>;
  var dA: array<f32, ${n}>;
  var dD = 0.0;
  for (var s = 0u; s < p.steps; s++) {
    let t = p.steps - 1u - s;
    let at = (bi * p.steps + t) * p.channels + di;
    let row = (bi * p.steps + t) * ${n}u;
    let dt = delta[at];
    let gt = g[at];
    var q = 0.0;
    var dDeltaA = 0.0;
    for (var k = 0u; k < ${n}u; k++) {
      let ak = a[di * ${n}u + k];
      let decay = exp(dt * ak);
      dh[k] += gt * c[row + k];
      var prev = 0.0;
      if (t > 0u) { prev = work[dCp + (at - p.channels) * ${n}u + k]; }
      let pk = dh[k] * prev * decay;
      q += dh[k] * b[row + k];
      dDeltaA += pk * ak;
      dA[k] += pk * dt;
      work[dBp + at * ${n}u + k] = dh[k] * dt * x[at];
      work[dCp + at * ${n}u + k] = gt * work[dCp + at * ${n}u + k];
      dh[k] *= decay;
    }
    work[at] = q * dt + dSkip[di] * gt;
    work[btd + at] = q * x[at] + dDeltaA;
    dD += gt * x[at];
  }
  for (var k = 0u; k < ${n}u; k++) { work[dAp + (bi * p.channels + di) * ${n}u + k] = dA[k]; }
  work[dDp + bi * p.channels + di] = dD;
}`,
  );
  rt.launch({
    program: shares,
    inputs: [x, delta, a, b, c, dSkip, g].map((t) => rt.storage(t.id)),
    outputs: [work],
    params: gradParams.pack({ count: 0, batch, steps, channels, n }),
    workgroups: Math.ceil((batch * channels) / wg),
  });
  const count = 2 * btd + channels * n + 2 * batch * steps * n + channels;
  const out = rt.alloc(count, 'f32');
  const sums = makeProgram(
    `selectiveScanGrad:sums:${wg}`,
    [{ name: 'work', type: 'f32' }],
    [{ name: 'out', type: 'f32' }],
    gradParams,
    () => `${entryPoint(wg)}
  let i = gid * ${wg}u + lid;
  if (i >= p.count) { return; }${layout}
  let btd = p.batch * p.steps * p.channels;
  let btn = p.batch * p.steps * p.n;
  let dn = p.channels * p.n;
  var s = 0.0;
  if (i < 2u * btd) {
    s = work[i];
  } else if (i < 2u * btd + dn) {
    let j = i - 2u * btd;
    for (var bi = 0u; bi < p.batch; bi++) { s += work[dAp + bi * dn + j]; }
  } else if (i < 2u * btd + dn + 2u * btn) {
    let j = (i - 2u * btd - dn) % btn;
    let base = select(dBp, dCp, i >= 2u * btd + dn + btn);
    let bt = j / p.n;
    let k = j % p.n;
    for (var di = 0u; di < p.channels; di++) { s += work[base + (bt * p.channels + di) * p.n + k]; }
  } else {
    let di = i - 2u * btd - dn - 2u * btn;
    for (var bi = 0u; bi < p.batch; bi++) { s += work[dDp + bi * p.channels + di]; }
  }
  out[i] = s;
}`,
  );
  rt.launch({
    program: sums,
    inputs: [work],
    outputs: [out],
    params: gradParams.pack({ count, batch, steps, channels, n }),
    workgroups: Math.ceil(count / wg),
  });
  rt.release(work);
  return out;
}

/** The selective scan and its gradients (the kernels above). */
export function selectiveScanKernels(
  rt: GpuRuntime,
): Pick<FusedKernels, 'selectiveScan' | 'selectiveScanGrad'> {
  return {
    selectiveScan: (x, delta, a, b, c, dSkip) => selectiveScan(rt, x, delta, a, b, c, dSkip),
    selectiveScanGrad: (x, delta, a, b, c, dSkip, g) => selectiveScanGrad(rt, x, delta, a, b, c, dSkip, g),
  };
}
