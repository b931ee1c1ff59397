import { gelu, geluSlope } from './gelu-formula';
import type { CpuStorage } from './storage';
import { runVectorised } from './vectorised';
import { ACTIVATION_KERNELS } from './wasm/activation-kernel';

/**
 * out = gelu(x): in WebAssembly SIMD (exp by range reduction and a polynomial, within a few
 * f32 ulps of the scalar form) when the storages live in the heap, else in JavaScript.
 */
export function geluInto(x: CpuStorage, out: CpuStorage): void {
  const done = runVectorised(ACTIVATION_KERNELS.gelu, [x], out, x.length);
  const xv = x.values;
  const ov = out.values;
  for (let i = done; i < xv.length; i++) ov[i] = gelu(xv[i]);
}

/** out = grad · gelu'(x), like `geluInto`. */
export function geluGradInto(x: CpuStorage, grad: CpuStorage, out: CpuStorage): void {
  const done = runVectorised(ACTIVATION_KERNELS.geluGrad, [x, grad], out, x.length);
  const xv = x.values;
  const gv = grad.values;
  const ov = out.values;
  for (let i = done; i < xv.length; i++) ov[i] = gv[i] * geluSlope(xv[i]);
}
