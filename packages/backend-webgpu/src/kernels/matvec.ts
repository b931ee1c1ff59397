import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';
import { workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('n', 'u32')
  .scalar('k', 'u32')
  .scalar('aStride', 'u32')
  .scalar('bStride', 'u32');

/** Threads sharing one dot product when B is stored [n, k]. */
const DOT_THREADS = 64;

/**
 * The m = 1 product (one decode step): out[b, j] = sum_k a[b, k] * B[b][k, j]. With B stored
 * [n, k] (`transB`, weights kept [out, in]) each output is a contiguous dot product shared by
 * a workgroup; with B stored [k, n] each thread owns an output and neighbours read
 * neighbouring columns.
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
    ? makeProgram(
        `matvec:rows:${DOT_THREADS}`,
        decls,
        [{ name: 'out', type: 'f32' }],
        params,
        () => `${workgroupReduce('sum_all', 'f32', DOT_THREADS, 'a + b')}
${entryPoint(DOT_THREADS)}
  if (gid >= p.count) { return; }
  let batch = gid / p.n;
  let j = gid % p.n;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride + j * p.k;
  var acc = 0.0;
  for (var kk = lid; kk < p.k; kk += ${DOT_THREADS}u) {
    acc += a[aBase + kk] * b[bBase + kk];
  }
  let r = sum_all(acc, lid);
  if (lid == 0u) { out[gid] = r; }
}`,
      )
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
      n: spec.n,
      k: spec.k,
      aStride: spec.aBatchStride,
      bStride: spec.bBatchStride,
    }),
    workgroups: spec.transB ? count : Math.ceil(count / wg),
  });
  return out;
}
