import type { MatmulSpec, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { KernelProgram } from '../kernel-program';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
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
type RowStrategy = 'thread' | 'subgroups' | 'shared';
type RowReduction = Exclude<RowStrategy, 'thread'>;

/**
 * Sums `acc` over the workgroup into `total` on thread 0. With subgroups, each subgroup adds in registers
 * and its first lane leaves the sum in shared memory, which thread 0 adds up (no assumption on how
 * subgroups tile the workgroup: lanes that are not first leave zeros); otherwise a shared-memory tree.
 */
function reduction(kind: RowReduction, wg: number): { decl: string; body: string } {
  if (kind === 'shared') {
    return {
      decl: workgroupReduce('sum_all', 'f32', wg, 'a + b'),
      body: 'let total = sum_all(acc, lid);',
    };
  }
  return {
    decl: `var<workgroup> partial: array<vec4<f32>, ${wg / 4}>;`,
    body: `let part = subgroupAdd(acc);
  partial[lid / 4u][lid % 4u] = select(0.0, part, sid == 0u);
  workgroupBarrier();
  var sums = vec4<f32>(0.0);
  for (var i = 0u; i < ${wg / 4}u; i++) { sums += partial[i]; }
  let total = sums.x + sums.y + sums.z + sums.w;`,
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
function threadRowsCode(wg: number, width: 1 | 4): string {
  const dot = dotCode(width);
  return `${entryPoint(wg)}
${outputCode(`gid * ${wg}u + lid`, 'j * p.k')}
  for (var kk = 0u; kk < p.k; kk++) { acc += ${dot}; }
  out[o] = acc;
}`;
}

/**
 * B stored [n, k], the decode weights' layout, on a GPU: one workgroup per output row, its threads stepping through
 * the row side by side (`width` values per load, vec4 when k allows), so each step of the workgroup reads
 * one contiguous span of the weight: the coalesced stream a GPU needs for a bandwidth-bound product.
 */
function rowsCode(wg: number, width: 1 | 4, kind: RowReduction): string {
  const dot = dotCode(width);
  const { decl, body } = reduction(kind, wg);
  const header = entryPoint(wg).replace(
    'local_invocation_index) lid: u32',
    kind === 'subgroups'
      ? 'local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sid: u32'
      : 'local_invocation_index) lid: u32',
  );
  return `${decl}
${header}
${outputCode('gid', 'j * p.k')}
  for (var kk = lid; kk < p.k; kk += ${wg}u) { acc += ${dot}; }
  ${body}
  if (lid == 0u) { out[o] = total; }
}`;
}

/** B stored [k, n]: each thread owns an output column and neighbours read neighbouring columns. */
function columnsCode(wg: number): string {
  return `${entryPoint(wg)}
${outputCode(`gid * ${wg}u + lid`, 'j')}
  for (var kk = 0u; kk < p.k; kk++) { acc += a[aBase + kk] * b[bBase + kk * p.n]; }
  out[o] = acc;
}`;
}

/** A program whose WGSL opens with `enable subgroups;` (the directive must precede every declaration). */
function withSubgroups(program: KernelProgram): KernelProgram {
  return { ...program, code: () => `enable subgroups;\n${program.code()}` };
}

function rowStrategy(rt: GpuRuntime): RowStrategy {
  if (rt.features.software) return 'thread';
  return rt.features.subgroups ? 'subgroups' : 'shared';
}

/**
 * The m = 1 product (one decode step): out[b, j] = sum_k a[b, k] * B[b][k, j]. B stored [n, k] gets a
 * workgroup per output row on GPUs (subgroup sums where the device has them) and a thread per row on CPU
 * rasterisers; B stored [k, n] a thread per output.
 */
export function matvec(rt: GpuRuntime, a: TensorInfo, b: TensorInfo, spec: MatmulSpec): GpuStorage {
  const inputs = [rt.storage(a.id), rt.storage(b.id)];
  const count = spec.batch * spec.n;
  const out = rt.alloc(count, 'f32');
  const aligned = spec.k % 4 === 0 && spec.aBatchStride % 4 === 0 && spec.bBatchStride % 4 === 0;
  const width = spec.transB && spec.k > 0 && aligned ? 4 : 1;
  const type = width === 4 ? 'vec4<f32>' : 'f32';
  const strategy: RowStrategy | 'columns' = spec.transB ? rowStrategy(rt) : 'columns';
  const perRow = strategy === 'subgroups' || strategy === 'shared';
  const wg = perRow ? rowWorkgroupSize(spec.k / width, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const code = (): string => {
    switch (strategy) {
      case 'columns':
        return columnsCode(wg);
      case 'thread':
        return threadRowsCode(wg, width);
      default:
        return rowsCode(wg, width, strategy);
    }
  };
  const program = makeProgram(
    `matvec:${strategy}${width}:${wg}`,
    [
      { name: 'a', type },
      { name: 'b', type },
    ],
    [{ name: 'out', type: 'f32' }],
    params,
    code,
  );
  rt.launch({
    program: strategy === 'subgroups' ? withSubgroups(program) : program,
    inputs,
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
  return out;
}
