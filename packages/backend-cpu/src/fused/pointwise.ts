import { type FusedKernels, sizeOf } from '@loom/tensor';
import { geluGradInto, swigluGradInto, swigluInto } from '../activation';
import { gelu } from '../gelu-formula';
import type { CpuStorage } from '../storage';
import type { CpuKernelContext } from './kernel-context';

/** out = gelu(gate) · up (GELU's tanh form), elementwise, at the storages' precision. */
function gegluInto(gate: CpuStorage, up: CpuStorage, out: CpuStorage): void {
  const gv = gate.values;
  const uv = up.values;
  const ov = out.values;
  for (let i = 0; i < gv.length; i++) ov[i] = gelu(gv[i]) * uv[i];
}

/** out = cap · tanh(x / cap), elementwise, at the storages' precision. */
function softcapInto(x: CpuStorage, cap: number, out: CpuStorage): void {
  const xv = x.values;
  const ov = out.values;
  for (let i = 0; i < xv.length; i++) ov[i] = cap * Math.tanh(xv[i] / cap);
}

/** out = max(x, 0)², elementwise, at the storages' precision. */
function squaredReluInto(x: CpuStorage, out: CpuStorage): void {
  const xv = x.values;
  const ov = out.values;
  for (let i = 0; i < xv.length; i++) {
    const r = Math.max(xv[i], 0);
    ov[i] = r * r;
  }
}

/**
 * The elementwise fused ops, each output shaped like its first input: SwiGLU, its gate's
 * gradient and the gradient of GELU in WebAssembly SIMD where they can
 * (`activation.ts`), GeGLU, soft-capping and ReLU² in JavaScript.
 */
export function pointwiseKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'swiglu' | 'swigluGrad' | 'geglu' | 'geluGrad' | 'softcap' | 'squaredRelu'> {
  return {
    swiglu: (gate, up) =>
      ctx.out(sizeOf(gate.shape), (o) => swigluInto(ctx.settings, ctx.get(gate), ctx.get(up), o)),
    swigluGrad: (gate, up, grad) =>
      ctx.out(sizeOf(gate.shape), (o) =>
        swigluGradInto(ctx.settings, ctx.get(gate), ctx.get(up), ctx.get(grad), o),
      ),
    geglu: (gate, up) => ctx.out(sizeOf(gate.shape), (o) => gegluInto(ctx.get(gate), ctx.get(up), o)),
    geluGrad: (x, grad) =>
      ctx.out(sizeOf(x.shape), (o) => geluGradInto(ctx.settings, ctx.get(x), ctx.get(grad), o)),
    softcap: (x, cap) => ctx.out(sizeOf(x.shape), (o) => softcapInto(ctx.get(x), cap, o)),
    squaredRelu: (x) => ctx.out(sizeOf(x.shape), (o) => squaredReluInto(ctx.get(x), o)),
  };
}
