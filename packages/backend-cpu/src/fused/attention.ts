import { type AttentionSpec, type FusedKernels, type Shape, sizeOf, visibleKeys } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { attentionRowsInto } from './attention-rows';
import { decodeAttentionInto } from './decode-attention';
import type { CpuKernelContext } from './kernel-context';

/** Dot product of a[ao..ao+n) and b[bo..bo+n), four independent sums. */
export function dot(a: FloatArray, ao: number, b: FloatArray, bo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < n; d += 4) {
    s0 += a[ao + d] * b[bo + d];
    s1 += a[ao + d + 1] * b[bo + d + 1];
    s2 += a[ao + d + 2] * b[bo + d + 2];
    s3 += a[ao + d + 3] * b[bo + d + 3];
  }
  for (; d < n; d++) s0 += a[ao + d] * b[bo + d];
  return s0 + s1 + s2 + s3;
}

/** acc[0..n) += w * v[vo..vo+n). */
function axpy(acc: Float64Array, w: number, v: FloatArray, vo: number, n: number): void {
  let d = 0;
  for (; d + 3 < n; d += 4) {
    acc[d] += w * v[vo + d];
    acc[d + 1] += w * v[vo + d + 1];
    acc[d + 2] += w * v[vo + d + 2];
    acc[d + 3] += w * v[vo + d + 3];
  }
  for (; d < n; d++) acc[d] += w * v[vo + d];
}

/**
 * The numerators w[start, end) = e^(s_j - max) of one query's softmax over its visible keys, s_j = scale q·k_j
 * with the query at q[qo, qo + hd) and key j's row at k[kvBase + j · rowStride, ...); returns Σ w.
 */
export function visibleWeights(
  q: FloatArray,
  qo: number,
  k: FloatArray,
  kvBase: number,
  rowStride: number,
  hd: number,
  start: number,
  end: number,
  scale: number,
  w: Float64Array,
): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = start; j < end; j++) {
    const score = dot(q, qo, k, kvBase + j * rowStride, hd) * scale;
    w[j] = score;
    if (score > max) max = score;
  }
  let sum = 0;
  for (let j = start; j < end; j++) {
    w[j] = Math.exp(w[j] - max);
    sum += w[j];
  }
  return sum;
}

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd] -> out [B, T, H, hd]. Query head h reads kv head
 * floor(h / (H / Hkv)); query t of row bi sees the keys `visibleKeys(spec, bi, t, S)` names (one range).
 */
export function attentionKernel(
  q: FloatArray,
  qShape: Shape,
  k: FloatArray,
  v: FloatArray,
  kShape: Shape,
  spec: AttentionSpec,
  out: FloatArray,
): void {
  const [b, t, h, hd] = qShape;
  const s = kShape[1];
  const hkv = kShape[2];
  const group = h / hkv;
  const rowStride = hkv * hd;
  const weights = new Float64Array(s);
  const acc = new Float64Array(hd);
  for (let bi = 0; bi < b; bi++) {
    for (let p = 0; p < t; p++) {
      const { start, end } = visibleKeys(spec, bi, p, s);
      for (let head = 0; head < h; head++) {
        const kvBase = bi * s * rowStride + Math.floor(head / group) * hd;
        const qo = ((bi * t + p) * h + head) * hd;
        const sum = visibleWeights(q, qo, k, kvBase, rowStride, hd, start, end, spec.scale, weights);
        acc.fill(0);
        for (let j = start; j < end; j++) axpy(acc, weights[j], v, kvBase + j * rowStride, hd);
        for (let d = 0; d < hd; d++) out[qo + d] = start >= end ? 0 : acc[d] / sum;
      }
    }
  }
}

/**
 * Attention: decode (one query per row) in `decodeAttentionInto`, several queries in blocks of rows in
 * `attentionRowsInto` (each block over the keys its rows see, no score tensor), and `attentionKernel` where
 * neither runs.
 */
export function attentionKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'attention'> {
  return {
    attention: (q, k, v, spec: AttentionSpec) =>
      ctx.out(sizeOf(q.shape), (o) => {
        const [qs, ks, vs] = [ctx.get(q), ctx.get(k), ctx.get(v)];
        if (
          !decodeAttentionInto(ctx.settings, qs, q.shape, ks, vs, k.shape, spec, o) &&
          !attentionRowsInto(ctx.settings, 'forward', [qs, ks, vs], q.shape, k.shape, spec, [o])
        ) {
          attentionKernel(qs.f32, q.shape, ks.f32, vs.f32, k.shape, spec, o.f32);
        }
      }),
  };
}
