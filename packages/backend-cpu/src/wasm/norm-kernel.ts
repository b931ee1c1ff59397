import { type Expr, f64, type Local, type Operand, op, scalar, simd, simdLoad, v128Zero } from './expr';
import type { FunctionBuilder } from './function-builder';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { add, mul, sub } from './vector-exp';
import { addWidened, pairwise, widenedTotal } from './widen';

const I = ValType.i32;
const V = ValType.v128;

/** Locals shared by the row loops of one kernel. */
export interface Rows {
  readonly f: FunctionBuilder;
  /** Byte offset into the current row. */
  readonly j: Local;
  readonly rowBytes: Local;
  /** d as f64, and eps as f64. */
  readonly d: Local;
  readonly eps: Local;
}

export function rows(f: FunctionBuilder, d: Local, epsF32: Local): Rows {
  const [j, rowBytes] = f.locals(I, 2);
  const [dF64, eps] = f.locals(ValType.f64, 2);
  f.set(rowBytes, op('i32.shl', d, 2));
  f.set(dF64, op('f64.convert_i32_u', d));
  f.set(eps, op('f64.promote_f32', epsF32));
  return { f, j, rowBytes, d: dF64, eps };
}

/** for (j = 0; j < row bytes; j += 16) body(). */
export function eachVector(r: Rows, body: () => void): void {
  r.f.for(r.j, 0, r.rowBytes, 16, body);
}

/** The vector at byte `j` (plus `offset`) of the row at `base`. */
export function at(r: Rows, base: Operand, offset = 0): Expr {
  return simdLoad('v128.load', scalar.add(base, r.j), offset);
}

/** The f32x4 at byte `j` of a row-independent array (the weights). */
const shared = at;

/** Vectors of a row summed in f32 (`pairwise`) before one float64 addition. */
const SUM_BLOCK = 8;

/**
 * Σ over the row of the vectors `value(offset)` gives (the vector `offset` bytes past byte `j`), in float64: blocks
 * of SUM_BLOCK vectors summed pairwise in f32, then (and the last row length mod SUM_BLOCK vectors one by one) into
 * two f64x2 accumulators per value (lanes 0-1 and lanes 2-3). Against widening every vector, [768, 128], one thread,
 * from the caches: LayerNorm 88-89 -> 67-68 us, its input gradient 131-132 -> 99-100, its parameters' 107 -> 90.
 */
export function sums(r: Rows, values: readonly ((offset: number) => Expr)[], into: readonly Local[]): void {
  const { f } = r;
  const v = f.local(V);
  const accs = values.map(() => f.locals(V, 2));
  for (const [low, high] of accs) {
    f.set(low, v128Zero);
    f.set(high, v128Zero);
  }
  const add = (vector: (value: (offset: number) => Expr) => Expr) =>
    values.forEach((value, i) => {
      const [low, high] = accs[i];
      f.set(v, vector(value));
      addWidened(f, low, high, v);
    });
  f.for(r.j, 0, op('i32.and', r.rowBytes, -16 * SUM_BLOCK), 16 * SUM_BLOCK, () =>
    add((value) => pairwise(SUM_BLOCK, (u) => value(16 * u))),
  );
  f.for(r.j, r.j, r.rowBytes, 16, () => add((value) => value(0)));
  for (const [i, [low, high]] of accs.entries()) {
    f.set(low, simd('f64x2.add', low, high));
    f.set(into[i], widenedTotal(low));
  }
}

/** v · v (the expression is emitted twice: two loads, no local). */
export function squared(v: Expr): Expr {
  return mul(v, v);
}

/** An f32x4 splat of an f64 scalar expression. */
export function splat(value: Expr): Expr {
  return simd('f32x4.splat', op('f32.demote_f64', value));
}

/** 1 / sqrt(meanSquare + eps) as an f32x4 splat. */
export function inverseRms(r: Rows, meanSquare: Operand): Expr {
  return splat(op('f64.div', f64(1), op('f64.sqrt', op('f64.add', meanSquare, r.eps))));
}

/*
 * LayerNorm, RMSNorm and their input gradients over rows of d values. Row statistics are summed
 * in float64 by blocks of f32 sums (`sums`), the element-wise parts are f32x4. Parameters: byte
 * addresses of the row-wise inputs, of the weights (and bias), of the output; the row count, the
 * row length d (a multiple of 4) and eps.
 */

/** LayerNorm: (x - mean) / sqrt(var + eps) · weight + bias per row. */
export const LAYERNORM = kernel({
  name: 'layernorm_f32',
  params: [...i32('x', 'weight', 'bias', 'out', 'rows', 'd'), ...f32('eps')],
  emit(f, { x, weight, bias, out, rows: count, d, eps }) {
    const r = rows(f, d, eps);
    const row = f.local(I);
    const [sum, ss] = f.locals(ValType.f64, 2);
    const [mean, inv] = f.locals(V, 2);
    f.for(row, 0, count, 1, () => {
      sums(r, [(o) => at(r, x, o)], [sum]);
      f.set(mean, splat(op('f64.div', sum, r.d)));
      sums(r, [(o) => squared(sub(at(r, x, o), mean))], [ss]);
      f.set(ss, op('f64.div', ss, r.d));
      f.set(inv, inverseRms(r, ss));
      eachVector(r, () =>
        f.storeV128(
          op('i32.add', out, r.j),
          add(mul(mul(sub(at(r, x), mean), inv), shared(r, weight)), shared(r, bias)),
        ),
      );
      f.set(x, op('i32.add', x, r.rowBytes));
      f.set(out, op('i32.add', out, r.rowBytes));
    });
  },
});

/** LayerNorm's input gradient (without bias: it does not depend on it). */
export const LAYERNORM_GRAD = kernel({
  name: 'layernorm_grad_f32',
  params: [...i32('x', 'grad', 'weight', 'out', 'rows', 'd'), ...f32('eps')],
  emit(f, { x, grad, weight, out, rows: count, d, eps }) {
    const r = rows(f, d, eps);
    const row = f.local(I);
    const [sum, ss, dnSum, dnDot] = f.locals(ValType.f64, 4);
    const [mean, inv, dnMean, dotMean] = f.locals(V, 4);
    const normed = (o = 0) => mul(sub(at(r, x, o), mean), inv);
    const dn = (o = 0) => mul(at(r, grad, o), shared(r, weight, o));
    f.for(row, 0, count, 1, () => {
      sums(r, [(o) => at(r, x, o)], [sum]);
      f.set(mean, splat(op('f64.div', sum, r.d)));
      sums(r, [(o) => squared(sub(at(r, x, o), mean))], [ss]);
      f.set(inv, inverseRms(r, op('f64.div', ss, r.d)));
      sums(r, [dn, (o) => mul(dn(o), normed(o))], [dnSum, dnDot]);
      f.set(dnMean, splat(op('f64.div', dnSum, r.d)));
      f.set(dotMean, splat(op('f64.div', dnDot, r.d)));
      eachVector(r, () =>
        f.storeV128(op('i32.add', out, r.j), mul(inv, sub(sub(dn(), dnMean), mul(normed(), dotMean)))),
      );
      for (const p of [x, grad, out]) f.set(p, op('i32.add', p, r.rowBytes));
    });
  },
});

/** RMSNorm: x / sqrt(mean(x²) + eps) · weight per row. */
export const RMSNORM = kernel({
  name: 'rmsnorm_f32',
  params: [...i32('x', 'weight', 'out', 'rows', 'd'), ...f32('eps')],
  emit(f, { x, weight, out, rows: count, d, eps }) {
    const r = rows(f, d, eps);
    const row = f.local(I);
    const ss = f.local(ValType.f64);
    const inv = f.local(V);
    f.for(row, 0, count, 1, () => {
      sums(r, [(o) => squared(at(r, x, o))], [ss]);
      f.set(inv, inverseRms(r, op('f64.div', ss, r.d)));
      eachVector(r, () => f.storeV128(op('i32.add', out, r.j), mul(mul(at(r, x), inv), shared(r, weight))));
      f.set(x, op('i32.add', x, r.rowBytes));
      f.set(out, op('i32.add', out, r.rowBytes));
    });
  },
});

/** RMSNorm's input gradient. */
export const RMSNORM_GRAD = kernel({
  name: 'rmsnorm_grad_f32',
  params: [...i32('x', 'grad', 'weight', 'out', 'rows', 'd'), ...f32('eps')],
  emit(f, { x, grad, weight, out, rows: count, d, eps }) {
    const r = rows(f, d, eps);
    const row = f.local(I);
    const [ss, dot] = f.locals(ValType.f64, 2);
    const [inv, dotMean] = f.locals(V, 2);
    const dn = (o = 0) => mul(at(r, grad, o), shared(r, weight, o));
    f.for(row, 0, count, 1, () => {
      sums(r, [(o) => squared(at(r, x, o))], [ss]);
      f.set(inv, inverseRms(r, op('f64.div', ss, r.d)));
      sums(r, [(o) => mul(dn(o), mul(at(r, x, o), inv))], [dot]);
      f.set(dotMean, splat(op('f64.div', dot, r.d)));
      eachVector(r, () =>
        f.storeV128(op('i32.add', out, r.j), mul(inv, sub(dn(), mul(mul(at(r, x), inv), dotMean)))),
      );
      for (const p of [x, grad, out]) f.set(p, op('i32.add', p, r.rowBytes));
    });
  },
});

/** The normalisation kernels, in the module's order. */
export const NORMS = [LAYERNORM, LAYERNORM_GRAD, RMSNORM, RMSNORM_GRAD] as const;

/** Exported names of the normalisation kernels. */
export const NORM_KERNELS = {
  layernorm: LAYERNORM.name,
  layernormGrad: LAYERNORM_GRAD.name,
  rmsnorm: RMSNORM.name,
  rmsnormGrad: RMSNORM_GRAD.name,
} as const;
export type NormKernelName = (typeof NORM_KERNELS)[keyof typeof NORM_KERNELS];
