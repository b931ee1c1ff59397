import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { KernelProgram } from '../kernel-program';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { ADDEND_TERM, type Addend, addendOf, type ProductAddend } from './product-addend';
import { entryPoint, makeProgram } from './program';
import { rowWorkgroupSize, workgroupReduce } from './workgroup-reduce';

const params = new ParamLayout()
  .scalar('count', 'u32')
  .scalar('n', 'u32')
  .scalar('k', 'u32')
  .scalar('aStride', 'u32')
  .scalar('bStride', 'u32');

/**
 * How B stored [n, k] is walked: a thread per row on CPU rasterisers, a workgroup per row on GPUs, whose
 * threads then add up their partial sums through subgroups or shared memory.
 */
export type RowStrategy = 'thread' | 'subgroups' | 'shared';
export type RowReduction = Exclude<RowStrategy, 'thread'>;

/** Names a reduction reads and writes, so that one kernel can hold two (`prefix` namespaces its own). */
export interface ReductionNames {
  readonly type: 'f32' | 'vec4<f32>';
  /** The thread's partial value, and the `let` the sum is given to. */
  readonly acc: string;
  readonly total: string;
  readonly prefix: string;
}

const SCALAR_SUM: ReductionNames = { type: 'f32', acc: 'acc', total: 'total', prefix: '' };

/**
 * Sums `acc` (an f32, or a vec4<f32> of four sums) over the workgroup into `total`: on every thread for an f32,
 * on thread 0 for a vec4. With subgroups, each subgroup adds in registers and its first lane leaves the sum in
 * shared memory, which is then added up (no assumption on how subgroups tile the workgroup: lanes that are not
 * first leave zeros); otherwise a shared-memory tree.
 */
export function reduction(
  kind: RowReduction,
  wg: number,
  { type, acc, total, prefix }: ReductionNames = SCALAR_SUM,
): { decl: string; body: string } {
  if (kind === 'shared') {
    return {
      decl: workgroupReduce(`${prefix}sum_all`, type, wg, 'a + b'),
      body: `let ${total} = ${prefix}sum_all(${acc}, lid);`,
    };
  }
  if (type === 'vec4<f32>') {
    return {
      decl: `var<workgroup> ${prefix}partial: array<vec4<f32>, ${wg}>;`,
      body: `${prefix}partial[lid] = select(vec4<f32>(0.0), subgroupAdd(${acc}), sid == 0u);
  workgroupBarrier();
  var ${total} = vec4<f32>(0.0);
  if (lid == 0u) { for (var i = 0u; i < ${wg}u; i++) { ${total} += ${prefix}partial[i]; } }`,
    };
  }
  return {
    decl: `var<workgroup> ${prefix}partial: array<vec4<f32>, ${wg / 4}>;`,
    body: `${prefix}partial[lid / 4u][lid % 4u] = select(0.0, subgroupAdd(${acc}), sid == 0u);
  workgroupBarrier();
  var ${prefix}sums = vec4<f32>(0.0);
  for (var i = 0u; i < ${wg / 4}u; i++) { ${prefix}sums += ${prefix}partial[i]; }
  let ${total} = ${prefix}sums.x + ${prefix}sums.y + ${prefix}sums.z + ${prefix}sums.w;`,
  };
}

/** WGSL of a dot-product term at step kk: one vec4 `dot` or one scalar product. */
function dotCode(width: 1 | 4): string {
  return width === 4 ? 'dot(a[aBase + kk], b[bBase + kk])' : 'a[aBase + kk] * b[bBase + kk]';
}

/**
 * WGSL that names output `o` (the expression `index`), returns past the last one, and sets up its batch, column j,
 * the bases of its rows of A and B (B's offset within the batch is `bOffset`) and a zero accumulator.
 */
function outputCode(index: string, bOffset: string): string {
  return `  let o = ${index};
  if (o >= p.count) { return; }
  let batch = o / p.n;
  let j = o % p.n;
  let aBase = batch * p.aStride;
  let bBase = batch * p.bStride + ${bOffset};
  var acc = 0.0;`;
}

/**
 * B stored [n, k] on a CPU rasteriser: each thread walks one row of B, four values per load when k allows.
 * Neighbouring threads' rows share cache lines over consecutive steps, which suits the CPU's SIMD lanes.
 */
function threadRowsCode(wg: number, width: 1 | 4, addend: Addend): string {
  const dot = dotCode(width);
  return `${entryPoint(wg)}
${outputCode(`gid * ${wg}u + lid`, 'j * p.k')}
  for (var kk = 0u; kk < p.k; kk++) { acc += ${dot}; }
  out[o] = ${ADDEND_TERM[addend]}acc;
}`;
}

/**
 * B stored [n, k], the decode weights' layout, on a GPU: one workgroup per output row, its threads stepping through
 * the row side by side (`width` values per load, vec4 when k allows), so each step of the workgroup reads
 * one contiguous span of the weight: the coalesced stream a GPU needs for a bandwidth-bound product.
 */
function rowsCode(wg: number, width: 1 | 4, kind: RowReduction, addend: Addend): string {
  return workgroupPerOutput(
    wg,
    kind,
    outputCode('gid', 'j * p.k'),
    `for (var kk = lid; kk < p.k; kk += ${wg}u) { acc += ${dotCode(width)}; }`,
    `${ADDEND_TERM[addend]}total`,
  );
}

/**
 * WGSL of a kernel that gives output o = gid (below p.count) a workgroup of `wg` threads: `setup` declares what the
 * output needs and `var acc = 0.0`, `share` adds the thread's share of the sum to acc, the workgroup adds them up
 * (`reduction`), and thread 0 writes `result` (of `total`) to out[o].
 */
export function workgroupPerOutput(
  wg: number,
  kind: RowReduction,
  setup: string,
  share: string,
  result = 'total',
): string {
  const { decl, body } = reduction(kind, wg);
  return `${decl}
${rowEntryPoint(wg, kind)}
${setup}
  ${share}
  ${body}
  if (lid == 0u) { out[o] = ${result}; }
}`;
}

/** The entry point of a kernel whose workgroup sums its threads' partial values by `kind` (`sid`: the subgroup lane). */
export function rowEntryPoint(wg: number, kind: RowReduction): string {
  const lane = kind === 'subgroups' ? ', @builtin(subgroup_invocation_id) sid: u32' : '';
  return entryPoint(wg).replace(
    'local_invocation_index) lid: u32',
    `local_invocation_index) lid: u32${lane}`,
  );
}

/** B stored [k, n]: each thread owns an output column and neighbours read neighbouring columns. */
function columnsCode(wg: number, addend: Addend): string {
  return `${entryPoint(wg)}
${outputCode(`gid * ${wg}u + lid`, 'j')}
  for (var kk = 0u; kk < p.k; kk++) { acc += a[aBase + kk] * b[bBase + kk * p.n]; }
  out[o] = ${ADDEND_TERM[addend]}acc;
}`;
}

/**
 * `program` as `strategy` needs it compiled: with subgroup sums its WGSL opens with `enable subgroups;` (the
 * directive must precede every declaration).
 */
export function compiledFor(strategy: RowStrategy | 'columns', program: KernelProgram): KernelProgram {
  if (strategy !== 'subgroups') return program;
  return { ...program, code: () => `enable subgroups;\n${program.code()}` };
}

export function rowStrategy(rt: GpuRuntime): RowStrategy {
  if (rt.features.software) return 'thread';
  return rt.features.subgroups ? 'subgroups' : 'shared';
}

/** Each of `rows` rows [k] times a weight stored [n, k] (transposed), as one m = 1 product per row: [rows, n]. */
export function rowsTimesWeight(rows: number, n: number, k: number): MatmulSpec {
  return { batch: rows, m: 1, n, k, transA: false, transB: true, aBatchStride: k, bBatchStride: 0 };
}

/**
 * The m = 1 product (one decode step): out[b, j] = sum_k a[b, k] * B[b][k, j]. B stored [n, k] gets a
 * workgroup per output row on GPUs (subgroup sums where the device has them) and a thread per row on CPU
 * rasterisers; B stored [k, n] a thread per output.
 */
export function matvec(rt: GpuRuntime, a: TensorInfo, b: TensorInfo, spec: MatmulSpec): GpuStorage {
  const out = rt.alloc(spec.batch * spec.n, 'f32');
  matvecInto(rt, out, rt.storage(a.id), rt.storage(b.id), spec);
  return out;
}

/**
 * `matvec` written into `out` [batch, n], plus `add` where given: a residual [batch, n], which may be `out` itself
 * (out += a Bᵀ: a block's output projection and its residual add in one dispatch), or a bias [n].
 */
export function matvecInto(
  rt: GpuRuntime,
  out: GpuStorage,
  a: GpuStorage,
  b: GpuStorage,
  spec: MatmulSpec,
  add?: ProductAddend,
): void {
  const count = spec.batch * spec.n;
  const { mode, ...res } = addendOf(out, add);
  const aligned = spec.k % 4 === 0 && spec.aBatchStride % 4 === 0 && spec.bBatchStride % 4 === 0;
  const width = spec.transB && spec.k > 0 && aligned ? 4 : 1;
  const type = width === 4 ? 'vec4<f32>' : 'f32';
  const strategy: RowStrategy | 'columns' = spec.transB ? rowStrategy(rt) : 'columns';
  const perRow = strategy === 'subgroups' || strategy === 'shared';
  const wg = perRow ? rowWorkgroupSize(spec.k / width, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const code = (): string => {
    switch (strategy) {
      case 'columns':
        return columnsCode(wg, mode);
      case 'thread':
        return threadRowsCode(wg, width, mode);
      default:
        return rowsCode(wg, width, strategy, mode);
    }
  };
  const inputs = [{ name: 'a', type }, { name: 'b', type }, ...res.decls];
  const program = makeProgram(
    `matvec:${strategy}${width}:${wg}:${mode}`,
    inputs,
    [{ name: 'out', type: 'f32' }],
    params,
    code,
  );
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [a, b, ...res.storages],
    outputs: [out],
    params: params.pack({
      count,
      n: spec.n,
      k: spec.k / width,
      aStride: spec.aBatchStride / width,
      bStride: spec.bBatchStride / width,
    }),
    workgroups: perRow ? count : Math.ceil(count / wg),
  });
}
