import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('batch', 'u32')
  .scalar('n', 'u32')
  .scalar('k', 'u32')
  .scalar('aStride', 'u32')
  .scalar('bStride', 'u32');

/** Outputs (rows of B) per workgroup when B is stored [n, k]; one thread each. */
const ROWS = 64;
/** Slice of k staged in workgroup memory per step. */
const CHUNK = 32;

/**
 * B stored [n, k]: each workgroup owns ROWS outputs. Per slice of k, threads copy the
 * ROWS x CHUNK block of B into workgroup memory with neighbouring threads reading
 * neighbouring addresses, then each thread runs its row's dot product from shared memory.
 */
function rowsCode(): string {
  return `
var<workgroup> vecS: array<f32, ${CHUNK}>;
var<workgroup> rowsS: array<f32, ${ROWS * (CHUNK + 1)}>;
${entryPoint(ROWS)}
  let blocks = (p.n + ${ROWS - 1}u) / ${ROWS}u;
  if (gid >= blocks * p.batch) { return; }
  let batch = gid / blocks;
  let j0 = (gid % blocks) * ${ROWS}u;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride;
  var acc = 0.0;
  for (var k0 = 0u; k0 < p.k; k0 += ${CHUNK}u) {
    let c = lid % ${CHUNK}u;
    if (lid < ${CHUNK}u) {
      var v = 0.0;
      if (k0 + c < p.k) { v = a[aBase + k0 + c]; }
      vecS[c] = v;
    }
    for (var r = lid / ${CHUNK}u; r < ${ROWS}u; r += ${ROWS / CHUNK}u) {
      var v = 0.0;
      if (j0 + r < p.n && k0 + c < p.k) { v = b[bBase + (j0 + r) * p.k + k0 + c]; }
      rowsS[r * ${CHUNK + 1}u + c] = v;
    }
    workgroupBarrier();
    for (var cc = 0u; cc < ${CHUNK}u; cc++) { acc += vecS[cc] * rowsS[lid * ${CHUNK + 1}u + cc]; }
    workgroupBarrier();
  }
  if (j0 + lid < p.n) { out[batch * p.n + j0 + lid] = acc; }
}`;
}

/**
 * The m = 1 product (one decode step): out[b, j] = sum_k a[b, k] * B[b][k, j]. With B stored
 * [n, k] (`transB`, weights kept [out, in]) blocks of rows are staged through workgroup
 * memory; with B stored [k, n] each thread owns an output and neighbours read neighbouring
 * columns.
 */
export function matvec(rt: GpuRuntime, a: TensorInfo, b: TensorInfo, spec: MatmulSpec): GpuStorage {
  const inputs = [rt.storage(a.id), rt.storage(b.id)];
  const count = spec.batch * spec.n;
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const decls = [
    { name: 'a', type: 'f32' },
    { name: 'b', type: 'f32' },
  ];
  const program = spec.transB
    ? makeProgram(`matvec:rows:${ROWS}:${CHUNK}`, decls, [{ name: 'out', type: 'f32' }], params, rowsCode)
    : makeProgram(
        `matvec:columns:${wg}`,
        decls,
        [{ name: 'out', type: 'f32' }],
        params,
        () => `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let batch = o / p.n;
  let j = o % p.n;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride + j;
  var acc = 0.0;
  for (var kk = 0u; kk < p.k; kk++) {
    acc += a[aBase + kk] * b[bBase + kk * p.n];
  }
  out[o] = acc;
}`,
      );
  rt.launch({
    program,
    inputs,
    outputs: [out],
    params: params.pack({
      count,
      batch: spec.batch,
      n: spec.n,
      k: spec.k,
      aStride: spec.aBatchStride,
      bStride: spec.bBatchStride,
    }),
    workgroups: spec.transB ? spec.batch * Math.ceil(spec.n / ROWS) : Math.ceil(count / wg),
  });
  return out;
}
