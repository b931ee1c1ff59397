import type { DType } from '../dtype';
import type { HalfType } from '../half';
import type { Shape } from '../shape';

/** How the values of a generated input are drawn. */
export type Distribution =
  | { readonly kind: 'normal'; readonly scale?: number }
  | { readonly kind: 'positive' }
  | { readonly kind: 'uniform'; readonly low: number; readonly high: number }
  | { readonly kind: 'ints'; readonly low: number; readonly high: number }
  /** i32 words each packing two finite 16-bit floats (normal · scale, rounded to the type), as HalfWeight holds them. */
  | { readonly kind: 'halves'; readonly type: HalfType; readonly scale: number };

/** One input of a conformance case: its shape, dtype and distribution. */
export interface InputSpec {
  readonly shape: Shape;
  readonly dtype?: DType;
  readonly dist?: Distribution;
}

/** Allowed difference |actual - expected| <= atol + rtol * |expected|. */
export interface Tolerance {
  readonly atol: number;
  readonly rtol: number;
}

/** Elementwise arithmetic and simple transcendental functions. */
export const ELEMENTWISE: Tolerance = { atol: 1e-5, rtol: 1e-4 };
/** Reductions and normalisations: f32 sums in a different order. */
export const REDUCTION: Tolerance = { atol: 1e-4, rtol: 1e-4 };

/**
 * One conformance case of a fused op: seeded inputs (one spec per tensor input, in kernel
 * order) and the op's plain parameters. The kit runs it on every backend, fused kernel vs
 * composite and vs the reference backend.
 */
export interface FusedCase<P extends readonly unknown[]> {
  /** Shown in failures after the op's name, e.g. "[3, 7]". */
  readonly label: string;
  readonly inputs: readonly InputSpec[];
  readonly params: P;
  readonly tol: Tolerance;
}

/** An op's cases: at least one, so an op without cases does not type-check. */
export type FusedCases<P extends readonly unknown[]> = readonly [FusedCase<P>, ...FusedCase<P>[]];

/** Row shapes [..., d] the row-wise ops (softmax, norms) are checked over. */
export const ROW_SHAPES: readonly [Shape, ...Shape[]] = [
  [1, 1],
  [3, 7],
  [4, 64],
  [5, 65],
  [2, 3, 288],
  [1, 32_000],
  [3, 1000],
];

/** The row shapes of the norms' parameter gradients: ROW_SHAPES, and 300 rows (a sum over more rows than one CPU part). */
export const NORM_PARAM_GRAD_SHAPES: readonly [Shape, ...Shape[]] = [...ROW_SHAPES, [300, 48]];

/** "[2, 3]" for a case label. */
export function shapeLabel(shape: Shape): string {
  return `[${shape.join(', ')}]`;
}

/** One case per item (at least one item, so at least one case). */
export function casesOver<T, P extends readonly unknown[]>(
  items: readonly [T, ...T[]],
  make: (item: T) => FusedCase<P>,
): FusedCases<P> {
  const [first, ...rest] = items;
  return [make(first), ...rest.map(make)];
}

/** The cases of a norm's input-gradient kernel (x, weight [d], grad) over the row shapes, eps 1e-5. */
export const NORM_GRAD_CASES: FusedCases<[number]> = casesOver(ROW_SHAPES, (shape) => ({
  label: shapeLabel(shape),
  inputs: [{ shape }, { shape: [shape[shape.length - 1]] }, { shape }],
  params: [1e-5],
  tol: REDUCTION,
}));
