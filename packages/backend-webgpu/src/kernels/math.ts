/**
 * WGSL helpers shared by several kernels, written to stay accurate where the built-ins are
 * loose or undefined (tanh for large |x|, pow of negative bases).
 */

/** tanh without overflow, accurate near 0 (series) and saturating cleanly at large |x|. */
export const TANH = `
fn tanh_(x: f32) -> f32 {
  let ax = abs(x);
  if (ax < 0.125) {
    let x2 = x * x;
    return x * (1.0 + x2 * (-0.33333333 + x2 * (0.13333333 - x2 * 0.053968254)));
  }
  let e = exp(-2.0 * ax);
  return sign(x) * (1.0 - e) / (1.0 + e);
}`;

export const SIGMOID = `
fn sigmoid_(x: f32) -> f32 {
  return 1.0 / (1.0 + exp(-x));
}`;

/** GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
export const GELU = `${TANH}
fn gelu_(x: f32) -> f32 {
  return 0.5 * x * (1.0 + tanh_(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}`;

/** x^y with JavaScript's rules for negative bases (integer exponents keep their sign), zero and one. */
export const POW = `
fn pow_(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  var infinity = 0x7f800000u;
  var nan = 0x7fc00000u;
  if (x == 0.0) { return select(bitcast<f32>(infinity), 0.0, y > 0.0); }
  let r = exp2(y * log2(abs(x)));
  if (x > 0.0) { return r; }
  if (floor(y) != y) { return bitcast<f32>(nan); }
  let odd = abs(y) < 16777216.0 && (i32(abs(y)) & 1) == 1;
  return select(r, -r, odd);
}`;

/**
 * -infinity for WGSL, which has no literal for it and rejects infinite constant expressions:
 * the bits are loaded from a variable so the bitcast happens at run time.
 */
export const NEG_INF_FN = `
fn neg_inf() -> f32 {
  var bits = 0xff800000u;
  return bitcast<f32>(bits);
}`;

/** Expression for -infinity; include `NEG_INF_FN` in the shader. */
export const NEG_INFINITY = 'neg_inf()';

export const I32_MIN = 'bitcast<i32>(0x80000000u)';
