import type { UnaryOp } from '@loom/tensor';
import { geluSlope } from './gelu-formula';
import type { CpuStorage } from './storage';
import { silu, unaryKernel } from './unary';
import { runVectorised } from './vectorised';
import { ACTIVATION_KERNELS } from './wasm/activation-kernel';
import type { CpuKernelSettings } from './wasm/settings';

/** Unary ops with a WebAssembly SIMD kernel (exp by range reduction and a polynomial, a few f32 ulps). */
type VectorUnaryOp = Extract<UnaryOp, 'gelu' | 'exp' | 'sigmoid' | 'silu'>;

/** The kernel of each vector op. */
const VECTOR_UNARY: Readonly<Record<VectorUnaryOp, (typeof ACTIVATION_KERNELS)[VectorUnaryOp]>> = {
  gelu: ACTIVATION_KERNELS.gelu,
  exp: ACTIVATION_KERNELS.exp,
  sigmoid: ACTIVATION_KERNELS.sigmoid,
  silu: ACTIVATION_KERNELS.silu,
};

function isVectorUnary(op: UnaryOp): op is VectorUnaryOp {
  return op in VECTOR_UNARY;
}

/**
 * out = op(x) in WebAssembly SIMD when op has a vector kernel and the f32 storages live in the
 * heap (the last n % 4 elements by the JavaScript loop of `unaryKernel`); returns false,
 * computing nothing, otherwise.
 */
export function unaryVectorInto(
  settings: CpuKernelSettings,
  op: UnaryOp,
  x: CpuStorage,
  out: CpuStorage,
): boolean {
  if (!isVectorUnary(op) || x.dtype !== 'f32') return false;
  const done = runVectorised(settings, VECTOR_UNARY[op], [x, out], x.length);
  if (done === 0 && x.length >= 4) return false;
  unaryKernel(op, x.values.subarray(done), out.values.subarray(done));
  return true;
}

/** out = grad · gelu'(x): in WebAssembly SIMD where the storages live in the heap, else in JavaScript. */
export function geluGradInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  grad: CpuStorage,
  out: CpuStorage,
): void {
  const done = runVectorised(settings, ACTIVATION_KERNELS.geluGrad, [x, grad, out], x.length);
  const xv = x.values;
  const gv = grad.values;
  const ov = out.values;
  for (let i = done; i < xv.length; i++) ov[i] = gv[i] * geluSlope(xv[i]);
}

/** out = silu(gate) · up, like `geluGradInto`. */
export function swigluInto(
  settings: CpuKernelSettings,
  gate: CpuStorage,
  up: CpuStorage,
  out: CpuStorage,
): void {
  const done = runVectorised(settings, ACTIVATION_KERNELS.swiglu, [gate, up, out], gate.length);
  const gv = gate.values;
  const uv = up.values;
  const ov = out.values;
  for (let i = done; i < gv.length; i++) ov[i] = silu(gv[i]) * uv[i];
}

/**
 * SwiGLU's gate gradient out = grad · up · silu'(gate), like `geluGradInto` (the up gradient
 * grad · silu(gate) is `swigluInto(gate, grad)`).
 */
export function swigluGradInto(
  settings: CpuKernelSettings,
  gate: CpuStorage,
  up: CpuStorage,
  grad: CpuStorage,
  out: CpuStorage,
): void {
  const done = runVectorised(settings, ACTIVATION_KERNELS.swigluGrad, [gate, up, grad, out], gate.length);
  const av = gate.values;
  const uv = up.values;
  const gv = grad.values;
  const ov = out.values;
  for (let i = done; i < av.length; i++) {
    const s = 1 / (1 + Math.exp(-av[i]));
    ov[i] = gv[i] * uv[i] * (s + av[i] * s * (1 - s));
  }
}
