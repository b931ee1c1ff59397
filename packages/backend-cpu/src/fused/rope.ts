import type { Shape } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import type { KernelArgs } from '../wasm/kernels';
import { ROPE_KERNEL } from '../wasm/rope-kernel';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';

/** Estimated cost of one rotated element of the WebAssembly kernel, in microseconds. */
const MICROS_PER_ELEMENT = 0.0005;

/**
 * scale times the cos and sin of the angle (offset + p) * freqs[i] of each position p < t and pair
 * i < freqs.length, as [t, freqs.length]; float32 (frequencies and angles too, like llama2.c) when
 * `single`, else float64.
 */
function ropeTables(
  t: number,
  freqs: readonly number[],
  offset: number,
  scale: number,
  single: boolean,
): { cos: FloatArray; sin: FloatArray } {
  const half = freqs.length;
  const round = single ? Math.fround : (v: number) => v;
  const cos = single ? new Float32Array(t * half) : new Float64Array(t * half);
  const sin = single ? new Float32Array(t * half) : new Float64Array(t * half);
  for (let p = 0; p < t; p++) {
    for (let i = 0; i < half; i++) {
      const angle = round((offset + p) * round(freqs[i]));
      cos[p * half + i] = scale * Math.cos(angle);
      sin[p * half + i] = scale * Math.sin(angle);
    }
  }
  return { cos, sin };
}

/**
 * RoPE in the WebAssembly SIMD kernel (batches split across threads) when x and out live in the
 * heap and hd is a multiple of 4, else `ropeKernel`. Same tables, so the same values.
 */
export function ropeInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  shape: Shape,
  offset: number,
  freqs: readonly number[],
  scale: number,
  out: CpuStorage,
): void {
  const [b, t, h, hd] = shape;
  const runtime = kernelRuntime(settings);
  const [xAddress, outAddress] = [x.address, out.address];
  if (!runtime || xAddress === undefined || outAddress === undefined || hd % 4 !== 0 || x.length === 0) {
    ropeKernel(x.f32, shape, offset, freqs, scale, out.f32);
    return;
  }
  const { cos, sin } = ropeTables(t, freqs, offset, scale, true);
  // Expanded to [t, hd]: each pair's cos twice, and -sin, +sin.
  const cosTable = new CpuStorage('f32', t * hd, false);
  const sinTable = new CpuStorage('f32', t * hd, false);
  try {
    const [cosAddress, sinAddress] = [cosTable.address, sinTable.address];
    if (cosAddress === undefined || sinAddress === undefined) {
      ropeKernel(x.f32, shape, offset, freqs, scale, out.f32);
      return;
    }
    const [cv, sv] = [cosTable.f32, sinTable.f32];
    for (let k = 0; k < cos.length; k++) {
      cv[2 * k] = cos[k];
      cv[2 * k + 1] = cos[k];
      sv[2 * k] = -sin[k];
      sv[2 * k + 1] = sin[k];
    }
    const batchBytes = 4 * t * h * hd;
    forkJoin(runtime, settings.threads, ROPE_KERNEL, x.length * MICROS_PER_ELEMENT, (threads) => {
      const per = Math.ceil(b / Math.min(b, 2 * threads));
      const chunks: KernelArgs<typeof ROPE_KERNEL>[] = [];
      for (let start = 0; start < b; start += per) {
        const count = Math.min(per, b - start);
        const offsetBytes = start * batchBytes;
        chunks.push([
          xAddress + offsetBytes,
          cosAddress,
          sinAddress,
          outAddress + offsetBytes,
          count,
          t,
          h,
          hd,
        ]);
      }
      return chunks;
    });
  } finally {
    cosTable.free();
    sinTable.free();
  }
}

/**
 * Rotates pairs (2i, 2i+1) of x [B, T, H, hd] by (offset + t) * freqs[i] and scales them by `scale`.
 * On float32 values the frequencies, angles and their cosines and sines are float32, like llama2.c;
 * on float64 values (precision 'f64') all of it is float64.
 */
export function ropeKernel(
  x: FloatArray,
  shape: Shape,
  offset: number,
  freqs: readonly number[],
  scale: number,
  out: FloatArray,
): void {
  const [b, t, h, hd] = shape;
  const half = hd / 2;
  const { cos, sin } = ropeTables(t, freqs, offset, scale, x instanceof Float32Array);
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      for (let head = 0; head < h; head++) {
        const o = ((bi * t + p) * h + head) * hd;
        for (let i = 0; i < half; i++) {
          const c = cos[p * half + i];
          const s = sin[p * half + i];
          const x0 = x[o + 2 * i];
          const x1 = x[o + 2 * i + 1];
          out[o + 2 * i] = x0 * c - x1 * s;
          out[o + 2 * i + 1] = x0 * s + x1 * c;
        }
      }
    }
  }
}
