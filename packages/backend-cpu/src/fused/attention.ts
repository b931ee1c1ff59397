import type { AttentionSpec, Shape } from '@loom/tensor';

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd] -> out [B, T, H, hd]. Query head h reads kv head
 * floor(h / (H / Hkv)); with `causal`, query t sees keys s <= offset + t.
 */
export function attentionKernel(
  q: Float32Array,
  qShape: Shape,
  k: Float32Array,
  v: Float32Array,
  kShape: Shape,
  spec: AttentionSpec,
  out: Float32Array,
): void {
  const [b, t, h, hd] = qShape;
  const s = kShape[1];
  const hkv = kShape[2];
  const group = h / hkv;
  const scores = new Float64Array(s);
  const acc = new Float64Array(hd);
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      const visible = spec.causal ? Math.min(s, spec.offset + p + 1) : s;
      for (let head = 0; head < h; head++) {
        const kvHead = Math.floor(head / group);
        const qo = ((bi * t + p) * h + head) * hd;
        let max = Number.NEGATIVE_INFINITY;
        for (let j = 0; j < visible; j++) {
          const ko = ((bi * s + j) * hkv + kvHead) * hd;
          let dot = 0;
          for (let d = 0; d < hd; d++) dot += q[qo + d] * k[ko + d];
          scores[j] = dot * spec.scale;
          if (scores[j] > max) max = scores[j];
        }
        let sum = 0;
        acc.fill(0);
        for (let j = 0; j < visible; j++) {
          const w = Math.exp(scores[j] - max);
          sum += w;
          const vo = ((bi * s + j) * hkv + kvHead) * hd;
          for (let d = 0; d < hd; d++) acc[d] += w * v[vo + d];
        }
        for (let d = 0; d < hd; d++) out[qo + d] = visible === 0 ? 0 : acc[d] / sum;
      }
    }
  }
}
