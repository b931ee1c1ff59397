import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram } from './program';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('n', 'u32')
  .scalar('k', 'u32')
  .scalar('aStride', 'u32')
  .scalar('bStride', 'u32');

/**
 * B stored [n, k]: each thread walks one row of B, four values per load when k allows
 * (offsets and lengths are then in vec4 units). Neighbouring threads' rows share cache lines
 * over consecutive steps, which suits GPUs and CPU rasterisers (lavapipe, SwiftShader) alike.
 */
function rowsCode(wg: number, width: 1 | 4): string {
  const dot = width === 4 ? 'dot(a[aBase + kk], b[bBase + kk])' : 'a[aBase + kk] * b[bBase + kk]';
  return `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let batch = o / p.n;
  let j = o % p.n;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride + j * p.k;
  var acc = 0.0;
  for (var kk = 0u; kk < p.k; kk++) { acc += ${dot}; }
  out[o] = acc;
}`;
}

/** B stored [k, n]: each thread owns an output column and neighbours read neighbouring columns. */
function columnsCode(wg: number): string {
  return `${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let batch = o / p.n;
  let j = o % p.n;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride + j;
  var acc = 0.0;
  for (var kk = 0u; kk < p.k; kk++) { acc += a[aBase + kk] * b[bBase + kk * p.n]; }
  out[o] = acc;
}`;
}

/** The m = 1 product (one decode step): out[b, j] = sum_k a[b, k] * B[b][k, j], one thread per output. */
export function matvec(rt: GpuRuntime, a: TensorInfo, b: TensorInfo, spec: MatmulSpec): GpuStorage {
  const inputs = [rt.storage(a.id), rt.storage(b.id)];
  const count = spec.batch * spec.n;
  const out = rt.alloc(count, 'f32');
  const wg = rt.limits.workgroupSize;
  const width = spec.transB && spec.k > 0 && spec.k % 4 === 0 ? 4 : 1;
  const type = width === 4 ? 'vec4<f32>' : 'f32';
  const program = makeProgram(
    `matvec:${spec.transB ? `rows${width}` : 'columns'}:${wg}`,
    [
      { name: 'a', type },
      { name: 'b', type },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    () => (spec.transB ? rowsCode(wg, width) : columnsCode(wg)),
  );
  rt.launch({
    program,
    inputs,
    outputs: [out],
    params: params.pack({
      count,
      n: spec.n,
      k: spec.k / width,
      aStride: spec.aBatchStride / width,
      bStride: spec.bBatchStride / width,
    }),
    workgroups: Math.ceil(count / wg),
  });
  return out;
}
