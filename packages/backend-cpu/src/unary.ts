import type { HostArray, UnaryOp } from '@loom/tensor';

const GELU_C = Math.sqrt(2 / Math.PI);

/**
 * GELU, tanh approximation (as GPT-2): 0.5 x (1 + tanh(z)) with z = c (x + 0.044715 x³), computed
 * as x · sigmoid(2z) — the same function with one exp instead of a (slower) tanh.
 */
export function gelu(x: number): number {
  return x / (1 + Math.exp(-2 * GELU_C * (x + 0.044715 * x * x * x)));
}

/**
 * d gelu(x) / dx with s = sigmoid(2z): s + 2x s (1 - s) c (1 + 3 · 0.044715 x²), which equals
 * 0.5 (1 + t) + 0.5 x (1 - t²) dz/dx for t = tanh(z) = 2s - 1.
 */
export function geluSlope(x: number): number {
  const x2 = x * x;
  const s = 1 / (1 + Math.exp(-2 * GELU_C * (x + 0.044715 * x2 * x)));
  return s + 2 * x * s * (1 - s) * GELU_C * (1 + 3 * 0.044715 * x2);
}

export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

type Loop = (x: HostArray, out: HostArray) => void;

/** One loop per op (monomorphic), each evaluating in float64 and storing the output dtype. */
const loops: Readonly<Record<UnaryOp, Loop>> = {
  neg: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = -x[i];
  },
  exp: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.exp(x[i]);
  },
  log: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.log(x[i]);
  },
  sqrt: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.sqrt(x[i]);
  },
  rsqrt: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = 1 / Math.sqrt(x[i]);
  },
  recip: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = 1 / x[i];
  },
  abs: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.abs(x[i]);
  },
  tanh: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.tanh(x[i]);
  },
  sigmoid: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = 1 / (1 + Math.exp(-x[i]));
  },
  silu: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = silu(x[i]);
  },
  gelu: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = gelu(x[i]);
  },
  relu: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.max(x[i], 0);
  },
  sin: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.sin(x[i]);
  },
  cos: (x, out) => {
    for (let i = 0; i < x.length; i++) out[i] = Math.cos(x[i]);
  },
};

export function unaryKernel(op: UnaryOp, x: HostArray, out: HostArray): void {
  loops[op](x, out);
}
