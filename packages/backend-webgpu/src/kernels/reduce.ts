import type { DType, ReduceDims, ReduceOp, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { I32_MIN, NEG_INF_FN, NEG_INFINITY } from './math';
import { entryPoint, makeProgram, wgslType } from './program';
import { rowWorkgroupSize, WORKGROUP_ROW_THRESHOLD, workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('size', 'u32')
  .scalar('inner', 'u32')
  .scalar('chunk', 'u32')
  .scalar('chunks', 'u32');

/** Values one thread folds in sequence before the tree takes over; bounds the f32 rounding of long sums. */
const PER_THREAD = 16;

function identity(op: ReduceOp, dtype: DType): string {
  if (op === 'sum') return dtype === 'f32' ? '0.0' : '0';
  return dtype === 'f32' ? NEG_INFINITY : I32_MIN;
}

function combine(op: ReduceOp): string {
  return op === 'sum' ? 'a + b' : 'max(a, b)';
}

function threadCode(op: ReduceOp, dtype: DType, wg: number): string {
  const type = wgslType(dtype);
  return `${NEG_INF_FN}
${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var acc: ${type} = ${identity(op, dtype)};
  for (var j = 0u; j < p.size; j++) {
    let a = acc;
    let b = x[base + j * p.inner];
    acc = ${combine(op)};
  }
  out[o] = acc;
}`;
}

/** One workgroup per (output, chunk of the row): each thread folds at most PER_THREAD values, then a tree. */
function chunkCode(op: ReduceOp, dtype: DType, wg: number): string {
  const type = wgslType(dtype);
  return `${NEG_INF_FN}
${workgroupReduce('combine_all', type, wg, combine(op))}
${entryPoint(wg)}
  if (gid >= p.count * p.chunks) { return; }
  let o = gid / p.chunks;
  let first = (gid % p.chunks) * p.chunk;
  let last = min(p.size, first + p.chunk);
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var acc: ${type} = ${identity(op, dtype)};
  for (var j = first + lid; j < last; j += ${wg}u) {
    let a = acc;
    let b = x[base + j * p.inner];
    acc = ${combine(op)};
  }
  let r = combine_all(acc, lid);
  if (lid == 0u) { out[gid] = r; }
}`;
}

/**
 * x viewed as [outer, size, inner] reduced over `size` into [outer, inner]. Short rows take one
 * thread per output. Long rows are cut into chunks of PER_THREAD values per thread, each chunk
 * reduced by a workgroup's shared-memory tree; when a row has several chunks their partial
 * results are reduced again the same way. Sums over millions of values stay accurate.
 */
export function reduce(rt: GpuRuntime, op: ReduceOp, x: TensorInfo, dims: ReduceDims): GpuStorage {
  const input = rt.storage(x.id);
  return reduceStorage(rt, op, input, x.dtype, dims);
}

function reduceStorage(
  rt: GpuRuntime,
  op: ReduceOp,
  input: GpuStorage,
  dtype: DType,
  dims: ReduceDims,
): GpuStorage {
  const count = dims.outer * dims.inner;
  const type = wgslType(dtype);
  if (dims.size <= WORKGROUP_ROW_THRESHOLD) {
    const wg = rt.limits.workgroupSize;
    const out = rt.alloc(count, dtype);
    const program = makeProgram(
      `reduce:${op}:${type}:thread:${wg}`,
      [{ name: 'x', type }],
      [{ name: 'out', type }],
      params,
      () => threadCode(op, dtype, wg),
    );
    rt.launch({
      program,
      inputs: [input],
      outputs: [out],
      params: params.pack({ count, size: dims.size, inner: dims.inner, chunk: dims.size, chunks: 1 }),
      workgroups: Math.ceil(count / wg),
    });
    return out;
  }
  const wg = rowWorkgroupSize(dims.size, rt.limits.workgroupSize);
  const chunk = wg * PER_THREAD;
  const chunks = Math.ceil(dims.size / chunk);
  const partial = rt.alloc(count * chunks, dtype);
  const program = makeProgram(
    `reduce:${op}:${type}:chunk:${wg}`,
    [{ name: 'x', type }],
    [{ name: 'out', type }],
    params,
    () => chunkCode(op, dtype, wg),
  );
  rt.launch({
    program,
    inputs: [input],
    outputs: [partial],
    params: params.pack({ count, size: dims.size, inner: dims.inner, chunk, chunks }),
    workgroups: count * chunks,
  });
  if (chunks === 1) return partial;
  const out = reduceStorage(rt, op, partial, dtype, { outer: count, size: chunks, inner: 1 });
  rt.release(partial);
  return out;
}
