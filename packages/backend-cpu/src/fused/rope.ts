import type { Shape } from '@loom/tensor';
import type { FloatArray } from '../precision';

/**
 * Rotates pairs (2i, 2i+1) of x [B, T, H, hd] by (offset + t) * theta^(-2i/hd). On float32
 * values the angles and their cosines and sines are float32, like llama2.c; on float64 values
 * (precision 'f64') all of it is float64.
 */
export function ropeKernel(
  x: FloatArray,
  shape: Shape,
  offset: number,
  theta: number,
  out: FloatArray,
): void {
  const [b, t, h, hd] = shape;
  const half = hd / 2;
  const single = x instanceof Float32Array;
  const round = single ? Math.fround : (v: number) => v;
  const cos = single ? new Float32Array(t * half) : new Float64Array(t * half);
  const sin = single ? new Float32Array(t * half) : new Float64Array(t * half);
  for (let p = 0; p < t; p++) {
    for (let i = 0; i < half; i++) {
      const freq = round(theta ** round(-(2 * i) / hd));
      const angle = round((offset + p) * freq);
      cos[p * half + i] = Math.cos(angle);
      sin[p * half + i] = Math.sin(angle);
    }
  }
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
