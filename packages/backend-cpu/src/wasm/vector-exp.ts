import { type Expr, f32x4, type Local, type Operand, simd } from './expr';
import type { FunctionBuilder } from './function-builder';
import { ValType } from './opcodes';

/**
 * exp is evaluated on [EXP_MIN, EXP_MAX]: 2^(k - 1) stays a normal f32 (k >= -125), and EXP_MAX
 * is just below ln(largest f32), so every finite result is produced.
 */
const EXP_MIN = -86.5;
const EXP_MAX = 88.7228;
/** ln 2 split so that k · LN2_HI is exact for |k| < 2^15. */
const LN2_HI = 0.693359375;
const LN2_LO = Math.LN2 - LN2_HI;
/** Taylor coefficients of e^r, highest first: 1/7! ... 1/0!; |r| <= ln2 / 2 keeps the error near 1 ulp. */
const EXP_TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1, 1];

export const add = (a: Operand, b: Operand): Expr => simd('f32x4.add', a, b);
export const sub = (a: Operand, b: Operand): Expr => simd('f32x4.sub', a, b);
export const mul = (a: Operand, b: Operand): Expr => simd('f32x4.mul', a, b);
export const div = (a: Operand, b: Operand): Expr => simd('f32x4.div', a, b);

/**
 * result = e^z on four lanes: z clamped to [EXP_MIN, EXP_MAX] (NaN stays NaN), k = round(z / ln2),
 * r = z - k ln2, e^z = 2^k · p(r) with 2^k built in the exponent bits; +Infinity above EXP_MAX
 * and 0 below EXP_MIN (so a -Infinity score gets exactly zero weight).
 * Overwrites `z` and `k`.
 */
export function emitExp(f: FunctionBuilder, z: Local, k: Local, result: Local): void {
  const [overflow, underflow] = f.locals(ValType.v128, 2);
  f.set(overflow, simd('f32x4.gt', z, f32x4(EXP_MAX)));
  f.set(underflow, simd('f32x4.lt', z, f32x4(EXP_MIN)));
  f.set(z, simd('f32x4.min', simd('f32x4.max', z, f32x4(EXP_MIN)), f32x4(EXP_MAX)));
  f.set(k, simd('f32x4.nearest', mul(z, f32x4(Math.LOG2E))));
  f.set(z, sub(sub(z, mul(k, f32x4(LN2_HI))), mul(k, f32x4(LN2_LO))));
  const [first, ...rest] = EXP_TAYLOR;
  const poly = rest.reduce<Expr>((p, c) => add(mul(p, z), f32x4(c)), f32x4(first));
  // 2^k as 2^(k - 1) · 2: k reaches 128 near EXP_MAX, whose 2^k alone is not a finite f32.
  const exponent = simd('i32x4.add', simd('i32x4.trunc_sat_f32x4_s', k), simd('i32x4.splat', 126));
  f.set(result, mul(mul(poly, simd('i32x4.shl', exponent, 23)), f32x4(2)));
  f.set(result, simd('v128.bitselect', f32x4(Number.POSITIVE_INFINITY), result, overflow));
  f.set(result, simd('v128.bitselect', f32x4(0), result, underflow));
}
