import type { HostArray, UnaryOp } from '@loom/tensor';
import { gelu } from './gelu-formula';

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
