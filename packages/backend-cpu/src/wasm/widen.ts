import { type Expr, type Local, lane, type Operand, op, shuffle32, simd } from './expr';
import type { FunctionBuilder } from './function-builder';

/**
 * low += f64 of v's lanes 0-1, then high += f64 of its lanes 2-3: the float64 accumulation of four f32 lanes that the
 * sums, norms and softmaxes share (pass one local as both to keep a single total; v is read twice, so a local too).
 */
export function addWidened(f: FunctionBuilder, low: Local, high: Local, v: Local): void {
  f.set(low, simd('f64x2.add', low, simd('f64x2.promote_low_f32x4', v)));
  f.set(high, simd('f64x2.add', high, simd('f64x2.promote_low_f32x4', shuffle32(v, v, [2, 3, 0, 1]))));
}

/** The sum of the two f64 lanes of an accumulator `addWidened` filled (read twice: a local). */
export function widenedTotal(acc: Local): Operand {
  return op('f64.add', lane('f64x2.extract_lane', acc, 0), lane('f64x2.extract_lane', acc, 1));
}

/**
 * The f32 sum of `count` vectors by halves, ((v0 + v1) + (v2 + v3)) + ...: a block that `addWidened` then takes as
 * one vector. Widening costs a shuffle and two conversions a vector, all on one port of x86 cores, where an f32 add
 * runs on two; a block of 8 has three roundings, each within 2^-24 of the block's sum of magnitudes.
 */
export function pairwise(count: number, vector: (index: number) => Expr, from = 0): Expr {
  if (count === 1) return vector(from);
  const half = count >> 1;
  return simd('f32x4.add', pairwise(half, vector, from), pairwise(count - half, vector, from + half));
}
