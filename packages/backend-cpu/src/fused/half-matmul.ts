import { bf16ToF32, f16ToF32, type HalfType } from '@loom/tensor';
import type { CpuStorage } from '../storage';
import { MAX_CHUNKS } from '../threads/control';
import { forkJoin, PARALLEL_MIN_MICROS } from '../threads/fork-join';
import { HALF_STEP } from '../wasm/half-dot-kernel';
import { checkedArgs } from '../wasm/kernels';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';

/** The geometry of one product: x [rows, inner] times a 16-bit W [out, inner]. */
export interface HalfProduct {
  readonly type: HalfType;
  readonly rows: number;
  readonly out: number;
  readonly inner: number;
}

/** Single-thread speed used to decide on threads, in multiply-adds per microsecond (widening costs about half gemv's speed). */
const MACS_PER_MICRO = 2_000;
/** Chunks of outputs per thread, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 4;

/**
 * out [rows, out] = x [rows, inner] · Wᵀ for a 16-bit W (packed [out, inner / 2] i32, see HalfWeight), widening each
 * value as it is read: in WebAssembly (every operand in the heap, inner a multiple of 8) split across threads by
 * output, else JavaScript. Both are exact products of the widened values; only the order of the f32 sums differs.
 */
export function halfMatmulInto(
  settings: CpuKernelSettings,
  p: HalfProduct,
  x: CpuStorage,
  packed: CpuStorage,
  out: CpuStorage,
): void {
  checkSizes(p, x, packed, out);
  const runtime = kernelRuntime(settings);
  const [xa, wa, oa] = [x.address, packed.address, out.address];
  if (!runtime || xa === undefined || wa === undefined || oa === undefined || p.inner % HALF_STEP !== 0) {
    halfMatmulJs(p, x, packed, out);
    return;
  }
  const kernel = p.type === 'bf16' ? 'bf16_dot' : 'f16_dot';
  const micros = (p.rows * p.out * p.inner) / MACS_PER_MICRO;
  forkJoin(runtime, settings.threads, kernel, micros, (threads) => {
    const wanted = threads === 1 || micros < PARALLEL_MIN_MICROS ? 1 : threads * CHUNKS_PER_THREAD;
    const count = Math.min(MAX_CHUNKS, wanted, p.out);
    const chunks: number[][] = [];
    for (let t = 0; t < count; t++) {
      const j0 = Math.floor((p.out * t) / count);
      const j1 = Math.floor((p.out * (t + 1)) / count);
      const args = [p.rows, j1 - j0, p.inner, xa, wa + j0 * p.inner * 2, oa + j0 * 4, p.out * 4];
      chunks.push(checkedArgs(kernel, args));
    }
    return chunks;
  });
}

/** Throws unless the storages hold what `p` describes (the kernels trust these sizes). */
function checkSizes(p: HalfProduct, x: CpuStorage, packed: CpuStorage, out: CpuStorage): void {
  const need = [
    ['x', x, p.rows * p.inner],
    ['packed', packed, (p.out * p.inner) / 2],
    ['out', out, p.rows * p.out],
  ] as const;
  for (const [name, storage, elements] of need) {
    if (storage.length !== elements) {
      throw new Error(
        `halfMatmul: ${name} holds ${storage.length} values, but [${p.rows}, ${p.inner}] x ${p.type} ` +
          `[${p.out}, ${p.inner}] needs ${elements}`,
      );
    }
  }
}

/** The portable kernel: each row of W widened once, then dotted with every row of x. */
function halfMatmulJs(p: HalfProduct, x: CpuStorage, packed: CpuStorage, out: CpuStorage): void {
  const words = packed.i32;
  const halves = new Uint16Array(words.buffer, words.byteOffset, words.length * 2);
  const widen = p.type === 'bf16' ? bf16ToF32 : f16ToF32;
  const xv = x.f32;
  const ov = out.f32;
  for (let j = 0; j < p.out; j++) {
    const row = widen(halves.subarray(j * p.inner, (j + 1) * p.inner));
    for (let r = 0; r < p.rows; r++) {
      let sum = 0;
      const xo = r * p.inner;
      for (let i = 0; i < p.inner; i++) sum += xv[xo + i] * row[i];
      ov[r * p.out + j] = sum;
    }
  }
}
