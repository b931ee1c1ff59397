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
  .scalar('chunks', 'u32')
  .scalar('slot', 'u32');

/** Values one thread folds in sequence before the tree takes over; bounds the f32 rounding of long sums. */
const PER_THREAD = 16;

function identity(op: ReduceOp, dtype: DType): string {
  if (op === 'sum') return dtype === 'f32' ? '0.0' : '0';
  return dtype === 'f32' ? NEG_INFINITY : I32_MIN;
}

function combine(op: ReduceOp): string {
  return op === 'sum' ? 'a + b' : 'max(a, b)';
}

/** WGSL of the value folded in from x at index `at`: the value, or its square (`square`). */
function valueCode(at: string, square: boolean): string {
  return square ? `x[${at}] * x[${at}]` : `x[${at}]`;
}

function threadCode(op: ReduceOp, dtype: DType, wg: number, square: boolean): string {
  const type = wgslType(dtype);
  return `${NEG_INF_FN}
${entryPoint(wg)}
  let o = gid * ${wg}u + lid;
  if (o >= p.count) { return; }
  let base = (o / p.inner) * p.size * p.inner + o % p.inner;
  var acc: ${type} = ${identity(op, dtype)};
  for (var j = 0u; j < p.size; j++) {
    let a = acc;
    let b = ${valueCode('base + j * p.inner', square)};
    acc = ${combine(op)};
  }
  out[p.slot + o] = acc;
}`;
}

/** One workgroup per (output, chunk of the row): each thread folds at most PER_THREAD values, then a tree. */
function chunkCode(op: ReduceOp, dtype: DType, wg: number, square: boolean): string {
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
    let b = ${valueCode('base + j * p.inner', square)};
    acc = ${combine(op)};
  }
  let r = combine_all(acc, lid);
  if (lid == 0u) { out[p.slot + gid] = r; }
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

/** How `reduceStorage` reads and writes beyond a plain reduction. */
export interface ReduceOptions {
  /** Fold the squares of the values (a sum of squares) instead of the values. */
  readonly square?: boolean;
  /** Write the [outer, inner] result at element `slot` of `storage` instead of into new storage. */
  readonly into?: { readonly storage: GpuStorage; readonly slot: number };
}

/** `reduce` of storage `input` of `dtype`, with `options`; returns the storage written. */
export function reduceStorage(
  rt: GpuRuntime,
  op: ReduceOp,
  input: GpuStorage,
  dtype: DType,
  dims: ReduceDims,
  { square = false, into }: ReduceOptions = {},
): GpuStorage {
  const count = dims.outer * dims.inner;
  const type = wgslType(dtype);
  const key = `reduce:${op}:${type}${square ? ':square' : ''}`;
  if (dims.size <= WORKGROUP_ROW_THRESHOLD) {
    const wg = rt.limits.workgroupSize;
    const out = into?.storage ?? rt.alloc(count, dtype);
    const program = makeProgram(
      `${key}:thread:${wg}`,
      [{ name: 'x', type }],
      [{ name: 'out', type }],
      params,
      () => threadCode(op, dtype, wg, square),
    );
    rt.launch({
      program,
      inputs: [input],
      outputs: [out],
      params: params.pack({
        count,
        size: dims.size,
        inner: dims.inner,
        chunk: dims.size,
        chunks: 1,
        slot: into?.slot ?? 0,
      }),
      workgroups: Math.ceil(count / wg),
    });
    return out;
  }
  const wg = rowWorkgroupSize(dims.size, rt.limits.workgroupSize);
  const chunk = wg * PER_THREAD;
  const chunks = Math.ceil(dims.size / chunk);
  // One chunk a row is the result itself; more leave partial results, reduced again below.
  const final = chunks === 1 ? into : undefined;
  const partial = final?.storage ?? rt.alloc(count * chunks, dtype);
  const program = makeProgram(
    `${key}:chunk:${wg}`,
    [{ name: 'x', type }],
    [{ name: 'out', type }],
    params,
    () => chunkCode(op, dtype, wg, square),
  );
  rt.launch({
    program,
    inputs: [input],
    outputs: [partial],
    params: params.pack({
      count,
      size: dims.size,
      inner: dims.inner,
      chunk,
      chunks,
      slot: final?.slot ?? 0,
    }),
    workgroups: count * chunks,
  });
  if (chunks === 1) return partial;
  const out = reduceStorage(rt, op, partial, dtype, { outer: count, size: chunks, inner: 1 }, { into });
  rt.release(partial);
  return out;
}
