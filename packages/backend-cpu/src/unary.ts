import type { HostArray, UnaryOp } from '@loom/tensor';

const GELU_C = Math.sqrt(2 / Math.PI);

/** The scalar function of each unary op, evaluated in float64 and stored as the output dtype. */
export const unaryFns: Readonly<Record<UnaryOp, (x: number) => number>> = {
  neg: (x) => -x,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  recip: (x) => 1 / x,
  abs: Math.abs,
  tanh: Math.tanh,
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  silu: (x) => x / (1 + Math.exp(-x)),
  gelu: (x) => 0.5 * x * (1 + Math.tanh(GELU_C * (x + 0.044715 * x * x * x))),
  relu: (x) => Math.max(x, 0),
  sin: Math.sin,
  cos: Math.cos,
};

export function unaryKernel(op: UnaryOp, x: HostArray, out: HostArray): void {
  const f = unaryFns[op];
  for (let i = 0; i < x.length; i++) out[i] = f(x[i]);
}
