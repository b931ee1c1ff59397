import {
  BASELINE_FEATURES,
  type Expr,
  type KernelFeatures,
  type Local,
  mulAdd,
  type Operand,
  simd,
} from './expr';
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
/**
 * 1.5 · 2^23: adding it to |t| < 2^22 rounds t to the nearest integer k, held in the low
 * mantissa bits of the sum (so k needs no float-to-integer conversion).
 */
const ROUNDING_MAGIC = 12582912;
/**
 * Near-minimax coefficients of e^r on |r| <= ln2 / 2, highest degree first (fitted by
 * reweighted least squares on the relative error). Degree 6: relative error 1.7e-8 before f32
 * rounding; degree 5: 1.4e-7 (about one f32 ulp).
 */
const EXP_DEGREE_6 = [
  0.001384002505801618, 0.008374861441552639, 0.04166816920042038, 0.16666419804096222, 0.49999991059303284,
  1, 1,
];
const EXP_DEGREE_5 = [
  0.008299869485199451, 0.04191569983959198, 0.16667543351650238, 0.4999889135360718, 0.9999997019767761,
  1.0000001192092896,
];
/** The argument range of `emitExpClamped`: e^±87 are normal f32 values, and so is 1 + e^87. */
const CLAMPED_RANGE = 87;

export const add = (a: Operand, b: Operand): Expr => simd('f32x4.add', a, b);
export const sub = (a: Operand, b: Operand): Expr => simd('f32x4.sub', a, b);
export const mul = (a: Operand, b: Operand): Expr => simd('f32x4.mul', a, b);
export const div = (a: Operand, b: Operand): Expr => simd('f32x4.div', a, b);

/**
 * `x` clamped to [lo, hi] by pseudo-min and -max (one instruction each on x86); a NaN lane
 * stays NaN.
 */
export const clamp = (f: FunctionBuilder, x: Operand, lo: number, hi: number): Expr =>
  simd('f32x4.pmin', simd('f32x4.pmax', x, f.constant(lo)), f.constant(hi));

/**
 * Range reduction and polynomial of e^z for z already clamped to a range where |k| < 2^22:
 * k = round(z / ln2) by ROUNDING_MAGIC, z becomes r = z - k ln2, and the result is
 * p(r) · 2^(k + bias - 127) with the power of two built from k's bits (bias + k must stay in
 * [1, 254]). The polynomial by Horner's rule, in fused multiply-adds where `features` has them. Overwrites `z`
 * and `k`.
 */
function reduceAndEvaluate(
  f: FunctionBuilder,
  z: Local,
  k: Local,
  bias: number,
  coefficients: readonly number[],
  features: KernelFeatures,
): Expr {
  const magic = ROUNDING_MAGIC + bias;
  const sum = f.local(ValType.v128);
  f.set(sum, add(mul(z, f.constant(Math.LOG2E)), f.constant(magic)));
  f.set(k, sub(sum, f.constant(magic)));
  f.set(z, sub(sub(z, mul(k, f.constant(LN2_HI))), mul(k, f.constant(LN2_LO))));
  const [first, ...rest] = coefficients;
  const poly = rest.reduce<Operand>((p, c) => mulAdd(features, p, z, f.constant(c)), f.constant(first));
  // The sum's low mantissa bits hold bias + k; shifted into the exponent field they are 2^(k + bias - 127).
  return mul(poly, simd('i32x4.shl', sum, 23));
}

/**
 * result = e^z on four lanes: z clamped to [EXP_MIN, EXP_MAX] (NaN stays NaN), k = round(z / ln2),
 * r = z - k ln2, e^z = 2^k · p(r) with p of degree 6 and 2^k built in the exponent bits;
 * +Infinity above EXP_MAX and 0 below EXP_MIN (so a -Infinity score gets exactly zero weight).
 * Overwrites `z` and `k`.
 */
export function emitExp(
  f: FunctionBuilder,
  z: Local,
  k: Local,
  result: Local,
  features: KernelFeatures = BASELINE_FEATURES,
): void {
  const [overflow, underflow] = f.locals(ValType.v128, 2);
  f.set(overflow, simd('f32x4.gt', z, f.constant(EXP_MAX)));
  f.set(underflow, simd('f32x4.lt', z, f.constant(EXP_MIN)));
  f.set(z, clamp(f, z, EXP_MIN, EXP_MAX));
  // 2^k as 2^(k - 1) · 2: k reaches 128 near EXP_MAX, whose 2^k alone is not a finite f32.
  f.set(result, mul(reduceAndEvaluate(f, z, k, 126, EXP_DEGREE_6, features), f.constant(2)));
  f.set(result, simd('v128.bitselect', f.constant(Number.POSITIVE_INFINITY), result, overflow));
  f.set(result, simd('v128.bitselect', f.constant(0), result, underflow));
}

/**
 * result = e^z for z clamped to ±CLAMPED_RANGE (NaN stays NaN), by a degree-5 polynomial: a
 * relative error of about 2e-7 inside the range, and e^±87 instead of an infinity or a zero
 * outside it (e^-87 is 1.6e-38). For logistic functions 1 / (1 + e^z), where e^±80 already saturates the result.
 * Overwrites `z` and `k`.
 */
export function emitExpClamped(
  f: FunctionBuilder,
  z: Local,
  k: Local,
  result: Local,
  features: KernelFeatures = BASELINE_FEATURES,
): void {
  f.set(z, clamp(f, z, -CLAMPED_RANGE, CLAMPED_RANGE));
  f.set(result, reduceAndEvaluate(f, z, k, 127, EXP_DEGREE_5, features));
}
