import type { BinaryOp, CompareOp, DType, UnaryOp } from '@loom/tensor';

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU in GPT-2's tanh form, written as the textbook formula. */
export function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x ** 3)));
}

/** d gelu(x) / dx of the tanh form, by the product and chain rules. */
export function geluDerivative(x: number): number {
  const t = Math.tanh(GELU_C * (x + 0.044715 * x ** 3));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x);
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** One element of each unary op. */
export const unaryFormulas: Readonly<Record<UnaryOp, (x: number) => number>> = {
  neg: (x) => -x,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  recip: (x) => 1 / x,
  abs: Math.abs,
  tanh: Math.tanh,
  sigmoid,
  silu: (x) => x * sigmoid(x),
  gelu,
  relu: (x) => Math.max(x, 0),
  sin: Math.sin,
  cos: Math.cos,
};

function nanOr(a: number, b: number, pick: (a: number, b: number) => number): number {
  return Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : pick(a, b);
}

/** One element of each binary op in a dtype: i32 products wrap, i32 division truncates (by 0: the dividend). */
export function binaryFormula(op: BinaryOp, dtype: DType): (a: number, b: number) => number {
  switch (op) {
    case 'add':
      return (a, b) => a + b;
    case 'sub':
      return (a, b) => a - b;
    case 'mul':
      return dtype === 'i32' ? Math.imul : (a, b) => a * b;
    case 'div':
      return dtype === 'i32' ? (a, b) => (b === 0 ? a : Math.trunc(a / b)) : (a, b) => a / b;
    case 'pow':
      return Math.pow;
    case 'max':
      return (a, b) => nanOr(a, b, Math.max);
    case 'min':
      return (a, b) => nanOr(a, b, Math.min);
  }
}

/** One element of each comparison: 1 or 0. */
export const compareFormulas: Readonly<Record<CompareOp, (a: number, b: number) => number>> = {
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};
