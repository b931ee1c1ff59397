import { swigluInto } from '../activation';
import type { CpuPrecision } from '../precision';
import type { CpuStorage } from '../storage';
import type { CpuKernelSettings } from '../wasm/settings';
import { KeptScratch } from './kept-scratch';
import { rmsnormInto } from './norm';
import { type StoredWeight, weightProductInto } from './weight-product';

/** The operands of one pre-norm SwiGLU feed-forward (see `swigluBlock` in @loom/tensor). */
export interface SwigluBlockOperands {
  /** [rows, dim] */
  readonly x: CpuStorage;
  /** [dim] */
  readonly normWeight: CpuStorage;
  /** [hidden, dim] */
  readonly w1: StoredWeight;
  /** [hidden, dim] */
  readonly w3: StoredWeight;
  /** [dim, hidden] */
  readonly w2: StoredWeight;
}

/** The normalised rows, the gate and the up projection. */
const scratch = new KeptScratch();

/**
 * out [rows, dim] = x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ with n = rmsnorm(x, normWeight, eps): the same kernels as
 * the separate ops (the norm, three products on the kernels of their weights' formats, threads included, SwiGLU),
 * called from one place, so a decode step crosses from the tensor front-end into the backend once for the whole
 * feed-forward instead of six times.
 */
export function swigluBlockInto(
  settings: CpuKernelSettings,
  precision: CpuPrecision,
  { x, normWeight, w1, w3, w2 }: SwigluBlockOperands,
  hidden: number,
  eps: number,
  out: CpuStorage,
): void {
  const dim = normWeight.length;
  const rows = dim === 0 ? 0 : x.length / dim;
  const owned: CpuStorage[] = [];
  const n = scratch.get(0, rows * dim, precision, owned);
  const gate = scratch.get(1, rows * hidden, precision, owned);
  const up = scratch.get(2, rows * hidden, precision, owned);
  try {
    rmsnormInto(settings, x, normWeight, eps, n);
    weightProductInto(settings, w1, rows, hidden, dim, n, gate);
    weightProductInto(settings, w3, rows, hidden, dim, n, up);
    swigluInto(settings, gate, up, gate);
    weightProductInto(settings, w2, rows, dim, hidden, gate, out);
    const [ov, xv] = [out.f32, x.f32];
    for (let i = 0; i < ov.length; i++) ov[i] += xv[i];
  } finally {
    for (const storage of owned) storage.free();
  }
}
