import type { Shape } from '@loom/tensor';

/** Rotates pairs (2i, 2i+1) of x [B, T, H, hd] by (offset + t) * theta^(-2i/hd), in f32 like llama2.c. */
export function ropeKernel(
  x: Float32Array,
  shape: Shape,
  offset: number,
  theta: number,
  out: Float32Array,
): void {
  const [b, t, h, hd] = shape;
  const half = hd / 2;
  const cos = new Float32Array(t * half);
  const sin = new Float32Array(t * half);
  for (let p = 0; p < t; p++) {
    for (let i = 0; i < half; i++) {
      const freq = Math.fround(theta ** Math.fround(-(2 * i) / hd));
      const angle = Math.fround((offset + p) * freq);
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
