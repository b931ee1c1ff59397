import type { ReduceDims, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { I32_MIN, NEG_INF_FN, NEG_INFINITY } from './math';
import { entryPoint, makeProgram, wgslType } from './program';
import { rowWorkgroupSize, WORKGROUP_ROW_THRESHOLD } from './workgroup-reduce';

const params = new ParamLayout().scalar('count', 'u32').scalar('size', 'u32').scalar('inner', 'u32');

/** Shared-memory tree over (value, index) pairs keeping the larger value, the smaller index on ties. */
function pairReduce(type: string, size: number): string {
  return `
var<workgroup> best_value: array<${type}, ${size}>;
var<workgroup> best_index: array<u32, ${size}>;
fn argmax_all(v: ${type}, i: u32, lid: u32) -> u32 {
  best_value[lid] = v;
  best_index[lid] = i;
  workgroupBarrier();
  for (var s = ${size / 2}u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let bv = best_value[lid + s];
      let bi = best_index[lid + s];
      let av = best_value[lid];
      if (bv > av || (bv == av && bi < best_index[lid])) {
        best_value[lid] = bv;
        best_index[lid] = bi;
      }
    }
    workgroupBarrier();
  }
  return best_index[0];
}`;
}

/** Index (i32) of the first maximum along the middle axis of x viewed as [outer, size, inner]. */
export function argmax(rt: GpuRuntime, x: TensorInfo, dims: ReduceDims): GpuStorage {
  const input = rt.storage(x.id);
  const count = dims.outer * dims.inner;
  const out = rt.alloc(count, 'i32');
  const type = wgslType(x.dtype);
  const perRow = dims.size > WORKGROUP_ROW_THRESHOLD;
  const wg = perRow ? rowWorkgroupSize(dims.size, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const lowest = x.dtype === 'f32' ? NEG_INFINITY : I32_MIN;
  const scan = (start: string, step: string) => `
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var best: ${type} = ${lowest};
  var at = 0xffffffffu;
  for (var j = ${start}; j < p.size; j += ${step}) {
    let v = x[base + j * p.inner];
    if (at == 0xffffffffu || v > best) {
      best = v;
      at = j;
    }
  }`;
  const program = makeProgram(
    `argmax:${type}:${perRow ? 'workgroup' : 'thread'}:${wg}`,
    [{ name: 'x', type }],
    [{ name: 'out', type: 'i32' }],
    params,
    () =>
      perRow
        ? `${NEG_INF_FN}
${pairReduce(type, wg)}
${entryPoint(wg)}
  let o = gid;
  if (o >= p.count) { return; }
${scan('lid', `${wg}u`)}
  let r = argmax_all(best, at, lid);
  if (lid == 0u) { out[o] = i32(r); }
}`
        : `${NEG_INF_FN}
${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
${scan('0u', '1u')}
  out[o] = i32(select(at, 0u, at == 0xffffffffu));
}`,
  );
  rt.launch({
    program,
    inputs: [input],
    outputs: [out],
    params: params.pack({ count, size: dims.size, inner: dims.inner }),
    workgroups: perRow ? count : Math.ceil(count / wg),
  });
  return out;
}
