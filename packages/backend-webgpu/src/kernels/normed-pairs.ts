import { isQuantFormat, type WeightFormat } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, type RowReduction, reduction, rowEntryPoint, rowStrategy } from './matvec';
import { entryPoint, makeProgram } from './program';
import type { GpuWeight } from './weight-product';
import { dataType, type RowVector, stepValues, term, type WeightRow, weightRowDot } from './weight-row';
import { rowWorkgroupSize } from './workgroup-reduce';

/**
 * The parameters every `normedPairs` kernel reads; a variant extends this layout with its own and passes
 * `normedPairsParams(...)` among its values.
 */
export function normedPairsLayout() {
  return new ParamLayout()
    .scalar('count', 'u32')
    .scalar('rows', 'u32')
    .scalar('k', 'u32')
    .scalar('dim', 'u32')
    .scalar('eps', 'f32');
}

/** Loads a row of `dim` values takes: vec4s where dim allows. */
function widthOf(dim: number): 1 | 4 {
  return dim % 4 === 0 && dim > 0 ? 4 : 1;
}

/** The values of `normedPairsLayout`'s parameters for `rows` rows of `dim` values, `units` units a row. */
export function normedPairsParams(rows: number, units: number, dim: number, eps: number) {
  return { count: rows * units, rows, k: dim / widthOf(dim), dim, eps };
}

/**
 * Storage buffers a `normedPairs` kernel binds with weights of `formats` and `outputs` outputs: x, g, each weight's
 * data and a quantized one's scales, the outputs.
 */
export function normedPairsBuffers(formats: readonly WeightFormat[], outputs: number): number {
  return 2 + formats.reduce((n, format) => n + (isQuantFormat(format) ? 2 : 1), outputs);
}

/** Two weight buffers (indices into `weights`) whose rows a unit dots with the normed row: d0 from `a`, d1 from `b`. */
export interface PairSource {
  readonly a: number;
  readonly b: number;
}

/**
 * A kernel that starts a decode block: each unit dots one normed row n = x · rsqrt(mean(x²) + eps) · g with two
 * weight rows and hands the two sums to an epilogue that writes them out (SwiGLU's gate and up; a RoPE pair of
 * q, k or v). Each unit takes the row's sum of squares itself and forms n as it reads x, rounded as the norm kernel
 * rounds it, so the normed row is never written and the products match the separate ops'.
 */
export interface NormedPairs {
  /** Names the variant and its specialisation in the program key. */
  readonly key: string;
  /** x [rows, dim] and the norm's weight g [dim]. */
  readonly x: GpuStorage;
  readonly norm: GpuStorage;
  readonly rows: number;
  readonly dim: number;
  /** Weights stored [out, dim], each in its format: bound as w0, w1, ..., a quantized one's scales as s0, s1, ... */
  readonly weights: readonly GpuWeight[];
  /** The (weight, weight) pairs a unit may read; the unit's `m` picks one. */
  readonly sources: readonly PairSource[];
  /** Buffers the epilogue writes, bound under these names. */
  readonly outputs: readonly { readonly name: string; readonly storage: GpuStorage }[];
  /** Units per row; the kernel runs rows · units of them, the units of one row side by side for each u. */
  readonly units: number;
  /** `struct Params` (`normedPairsLayout()` extended) and its packed values (with `normedPairsParams(...)`). */
  readonly layout: { wgsl(): string };
  readonly params: ArrayBuffer;
  /** WGSL that sets `m` (a source), `rowA` and `rowB` (weight rows) from `u`, the unit within its row. */
  readonly select: string;
  /** WGSL that writes the unit's sums `d0` and `d1` (normed) for row `r`. */
  readonly epilogue: string;
  /** WGSL functions the epilogue calls. */
  readonly helpers?: string;
}

/** Σ x² over the thread's share of the row (kk from `first` by `step`) into `ss`. */
function squaresCode(width: 1 | 4, first: string, step: string): string {
  return `var ss = 0.0;
  for (var kk = ${first}; kk < p.k; kk += ${step}) {
    let xv = x[xBase + kk];
    ss += ${term(width, 'xv', 'xv')};
  }`;
}

/**
 * What a load of a weight of `format` takes beside x loaded `width` values at a time (see WeightRow): f32 values as
 * x; 16-bit words one by one beside scalars, else in pairs, or in fours (16 bytes) where a GPU's workgroup steps
 * through rows that allow them; a quantized block's words one by one.
 */
function loadOf(format: WeightFormat, width: 1 | 4, perUnit: boolean, dim: number): 1 | 2 | 4 {
  if (format === 'f32') return width;
  if (isQuantFormat(format) || width === 1) return 1;
  return perUnit && dim % 8 === 0 ? 4 : 2;
}

/** The normed row n = x · inv · g as `width` values a load, rounded as the norm rounds its output. */
function normedRow(width: 1 | 4): RowVector {
  return { width, at: (i) => `x[xBase + ${i}] * inv * g[${i}]` };
}

/**
 * The loop over a row for each source: acc gets (Σ n wA, Σ n wB, 0, 0) with n the normed row, steps from `first` by
 * `step`. Two f32 weights share one loop over x; otherwise each row is read in its own format by `weightRowDot`
 * (`rowOf(i, row)`: row `row` of weight i).
 */
function dotsCode(
  sources: readonly PairSource[],
  rowOf: (i: number, row: string) => WeightRow,
  width: 1 | 4,
  first: string,
  step: string,
): string {
  const normed = normedRow(width);
  const branches = sources.map(({ a, b }, m) => {
    const [rowA, rowB] = [rowOf(a, 'rowA'), rowOf(b, 'rowB')];
    if (rowA.format === 'f32' && rowB.format === 'f32') {
      return `if (m == ${m}u) {
    for (var kk = ${first}; kk < p.k; kk += ${step}) {
      let n = ${normed.at('kk')};
      acc += vec4<f32>(${term(width, 'n', `w${a}[rowA * p.k + kk]`)}, ${term(width, 'n', `w${b}[rowB * p.k + kk]`)}, 0.0, 0.0);
    }
  }`;
    }
    return `if (m == ${m}u) {
    ${weightRowDot(rowA, normed, 'acc.x', first, step)}
    ${weightRowDot(rowB, normed, 'acc.y', first, step)}
  }`;
  });
  return `var acc = vec4<f32>(0.0);
  ${branches.join(' else ')}`;
}

/** The unit's set-up: r, u, its source and rows, the start of its row of x. */
function unitCode(index: string, select: string): string {
  return `  let unit = ${index};
  if (unit >= p.count) { return; }
  let r = unit % p.rows;
  let u = unit / p.rows;
  var m = 0u;
  var rowA = 0u;
  var rowB = 0u;
  ${select}
  let xBase = r * p.k;`;
}

/** The norm's scale from the sum of squares `sum`, as the rmsnorm kernel computes it. */
function invCode(sum: string): string {
  return `let inv = 1.0 / sqrt(${sum} / f32(p.dim) + p.eps);`;
}

/**
 * The kernel of `spec`: a thread per unit on CPU rasterisers, a workgroup per unit on GPUs (see `matvec`), whose
 * threads step through the row's loads, words or blocks side by side. x and g are read by vec4s where dim allows
 * (always for quantized weights: dim is a multiple of 32).
 */
export function normedPairs(rt: GpuRuntime, spec: NormedPairs): void {
  const width = widthOf(spec.dim);
  const type = width === 4 ? 'vec4<f32>' : 'f32';
  const strategy = rowStrategy(rt);
  const perUnit = strategy !== 'thread';
  const loads = spec.weights.map(({ format }) => loadOf(format, width, perUnit, spec.dim));
  const rowOf = (i: number, row: string): WeightRow => {
    const [format, load] = [spec.weights[i].format, loads[i]];
    return {
      format,
      load,
      data: `w${i}`,
      scales: `s${i}`,
      row,
      steps: `p.dim / ${stepValues(format, load)}u`,
    };
  };
  const steps = Math.max(...spec.weights.map(({ format }, i) => spec.dim / stepValues(format, loads[i])));
  const wg = perUnit ? rowWorkgroupSize(steps, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const bound = spec.weights.flatMap(({ format, data, scales }, i) => {
    const words = { name: `w${i}`, type: dataType(format, loads[i]), storage: data };
    return isQuantFormat(format) ? [words, { name: `s${i}`, type: 'f32', storage: scales }] : [words];
  });
  const threadCode = (): string => `${spec.helpers ?? ''}
${entryPoint(wg)}
${unitCode(`gid * ${wg}u + lid`, spec.select)}
  ${squaresCode(width, '0u', '1u')}
  ${invCode('ss')}
  ${dotsCode(spec.sources, rowOf, width, '0u', '1u')}
  let d0 = acc.x;
  let d1 = acc.y;
  ${spec.epilogue}
}`;
  const unitsCode = (kind: RowReduction): string => {
    const squares = reduction(kind, wg, { type: 'f32', acc: 'ss', total: 'sumSquares', prefix: 'sq_' });
    const dots = reduction(kind, wg, { type: 'vec4<f32>', acc: 'acc', total: 'total', prefix: 'dot_' });
    return `${spec.helpers ?? ''}
${squares.decl}
${dots.decl}
${rowEntryPoint(wg, kind)}
${unitCode('gid', spec.select)}
  ${squaresCode(width, 'lid', `${wg}u`)}
  ${squares.body}
  ${invCode('sumSquares')}
  ${dotsCode(spec.sources, rowOf, width, 'lid', `${wg}u`)}
  ${dots.body}
  if (lid == 0u) {
    let d0 = total.x;
    let d1 = total.y;
    ${spec.epilogue}
  }
}`;
  };
  const formats = spec.weights.map(({ format }, i) => `${format}x${loads[i]}`);
  const program = makeProgram(
    `${spec.key}:${strategy}${width}:${wg}:${formats.join(',')}`,
    [{ name: 'x', type }, { name: 'g', type }, ...bound],
    spec.outputs.map(({ name }) => ({ name, type: 'f32' })),
    spec.layout,
    () => (strategy === 'thread' ? threadCode() : unitsCode(strategy)),
  );
  const count = spec.rows * spec.units;
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [spec.x, spec.norm, ...bound.map(({ storage }) => storage)],
    outputs: spec.outputs.map(({ storage }) => storage),
    params: spec.params,
    workgroups: perUnit ? count : Math.ceil(count / wg),
  });
}
