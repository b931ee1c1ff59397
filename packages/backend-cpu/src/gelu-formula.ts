/** GELU in its tanh form (as GPT-2), scalar: the reference the vector kernels are tested against. */

/** √(2/π) and the cubic coefficient of GELU's tanh form (as GPT-2). */
export const GELU_C = Math.sqrt(2 / Math.PI);
export const GELU_CUBIC = 0.044715;

/**
 * GELU, tanh approximation: 0.5 x (1 + tanh(z)) with z = c (x + 0.044715 x³), computed as
 * x · sigmoid(2z) — the same function with one exp instead of a (slower) tanh.
 */
export function gelu(x: number): number {
  return x / (1 + Math.exp(-2 * GELU_C * (x + GELU_CUBIC * x * x * x)));
}

/**
 * d gelu(x) / dx with s = sigmoid(2z): s + 2x s (1 - s) c (1 + 3 · 0.044715 x²), which equals
 * 0.5 (1 + t) + 0.5 x (1 - t²) dz/dx for t = tanh(z) = 2s - 1.
 */
export function geluSlope(x: number): number {
  const x2 = x * x;
  const s = 1 / (1 + Math.exp(-2 * GELU_C * (x + GELU_CUBIC * x2 * x)));
  return s + 2 * x * s * (1 - s) * GELU_C * (1 + 3 * GELU_CUBIC * x2);
}
