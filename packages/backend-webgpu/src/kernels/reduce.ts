import type { DType, ReduceDims, ReduceOp, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { I32_MIN, NEG_INF_FN, NEG_INFINITY } from './math';
import { entryPoint, makeProgram, wgslType } from './program';
import { rowWorkgroupSize, WORKGROUP_ROW_THRESHOLD, workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout().scalar('count', 'u32').scalar('size', 'u32').scalar('inner', 'u32');

function identity(op: ReduceOp, dtype: DType): string {
  if (op === 'sum') return dtype === 'f32' ? '0.0' : '0';
  return dtype === 'f32' ? NEG_INFINITY : I32_MIN;
}

function combine(op: ReduceOp): string {
  return op === 'sum' ? 'a + b' : 'max(a, b)';
}

/**
 * x viewed as [outer, size, inner] reduced over `size` into [outer, inner]. Short rows take
 * one thread per output; long rows take a workgroup each (strided partial results combined
 * by a shared-memory tree), which keeps sums over many thousands of values accurate.
 */
export function reduce(rt: GpuRuntime, op: ReduceOp, x: TensorInfo, dims: ReduceDims): GpuStorage {
  const input = rt.storage(x.id);
  const count = dims.outer * dims.inner;
  const out = rt.alloc(count, x.dtype);
  const type = wgslType(x.dtype);
  const perRow = dims.size > WORKGROUP_ROW_THRESHOLD;
  const wg = perRow ? rowWorkgroupSize(dims.size, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const ident = identity(op, x.dtype);
  const fold = combine(op);
  const program = makeProgram(
    `reduce:${op}:${type}:${perRow ? 'workgroup' : 'thread'}:${wg}`,
    [{ name: 'x', type }],
    [{ name: 'out', type }],
    params,
    () =>
      perRow
        ? `${NEG_INF_FN}
${workgroupReduce('combine_all', type, wg, fold)}
${entryPoint(wg)}
  let o = gid;
  if (o >= p.count) { return; }
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var acc: ${type} = ${ident};
  for (var j = lid; j < p.size; j += ${wg}u) {
    let a = acc;
    let b = x[base + j * p.inner];
    acc = ${fold};
  }
  let r = combine_all(acc, lid);
  if (lid == 0u) { out[o] = r; }
}`
        : `${NEG_INF_FN}
${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var acc: ${type} = ${ident};
  for (var j = 0u; j < p.size; j++) {
    let a = acc;
    let b = x[base + j * p.inner];
    acc = ${fold};
  }
  out[o] = acc;
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
