import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { compiledFor, type RowReduction, reduction, rowEntryPoint, rowStrategy } from './matvec';
import { entryPoint, makeProgram } from './program';
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
  /** Weights stored [out, dim], bound as w0, w1, ... */
  readonly weights: readonly GpuStorage[];
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

/** WGSL of one term at step kk: a vec4 `dot` or a scalar product. */
function term(width: 1 | 4, a: string, b: string): string {
  return width === 4 ? `dot(${a}, ${b})` : `${a} * ${b}`;
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
 * The loop over a row for each source: acc gets (Σ n wA, Σ n wB, 0, 0) with n = x · inv · g, rounded as the norm
 * rounds its output, kk from `first` by `step`.
 */
function dotsCode(sources: readonly PairSource[], width: 1 | 4, first: string, step: string): string {
  const branches = sources.map(({ a, b }, m) => {
    return `if (m == ${m}u) {
    for (var kk = ${first}; kk < p.k; kk += ${step}) {
      let n = x[xBase + kk] * inv * g[kk];
      acc += vec4<f32>(${term(width, 'n', `w${a}[rowA * p.k + kk]`)}, ${term(width, 'n', `w${b}[rowB * p.k + kk]`)}, 0.0, 0.0);
    }
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

/** The kernel of `spec`: a thread per unit on CPU rasterisers, a workgroup per unit on GPUs (see `matvec`). */
export function normedPairs(rt: GpuRuntime, spec: NormedPairs): void {
  const width = widthOf(spec.dim);
  const type = width === 4 ? 'vec4<f32>' : 'f32';
  const strategy = rowStrategy(rt);
  const perUnit = strategy !== 'thread';
  const wg = perUnit ? rowWorkgroupSize(spec.dim / width, rt.limits.workgroupSize) : rt.limits.workgroupSize;
  const threadCode = (): string => `${spec.helpers ?? ''}
${entryPoint(wg)}
${unitCode(`gid * ${wg}u + lid`, spec.select)}
  ${squaresCode(width, '0u', '1u')}
  ${invCode('ss')}
  ${dotsCode(spec.sources, width, '0u', '1u')}
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
  ${dotsCode(spec.sources, width, 'lid', `${wg}u`)}
  ${dots.body}
  if (lid == 0u) {
    let d0 = total.x;
    let d1 = total.y;
    ${spec.epilogue}
  }
}`;
  };
  const program = makeProgram(
    `${spec.key}:${strategy}${width}:${wg}`,
    [{ name: 'x', type }, { name: 'g', type }, ...spec.weights.map((_, i) => ({ name: `w${i}`, type }))],
    spec.outputs.map(({ name }) => ({ name, type: 'f32' })),
    spec.layout,
    () => (strategy === 'thread' ? threadCode() : unitsCode(strategy)),
  );
  const count = spec.rows * spec.units;
  rt.launch({
    program: compiledFor(strategy, program),
    inputs: [spec.x, spec.norm, ...spec.weights],
    outputs: spec.outputs.map(({ storage }) => storage),
    params: spec.params,
    workgroups: perUnit ? count : Math.ceil(count / wg),
  });
}
