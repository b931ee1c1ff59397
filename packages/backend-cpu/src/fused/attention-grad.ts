import { type AttentionSpec, type FusedKernels, type Shape, visibleKeys } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { dot, visibleWeights } from './attention';
import { attentionRowsInto } from './attention-rows';
import type { CpuKernelContext } from './kernel-context';

/** The sizes of q [B, T, H, hd] and k, v [B, S, Hkv, hd]. */
function sizesOf(qShape: Shape, kShape: Shape) {
  const [b, t, h, hd] = qShape;
  const [, s, hkv] = kShape;
  return { b, t, h, hd, s, hkv, group: h / hkv };
}

/**
 * The gradients of attention in JavaScript (float64 sums): for each query (b, t) and head, its weights p from the
 * scores over the visible keys, dp_j = grad · v_j, ds_j = scale p_j (dp_j - Σ p dp), then dq = Σ ds_j k_j,
 * dk_j += ds_j q and dv_j += p_j grad, added to dq (shaped like q), dk and dv (like k).
 */
export function attentionGradKernel(
  q: FloatArray,
  qShape: Shape,
  k: FloatArray,
  v: FloatArray,
  kShape: Shape,
  grad: FloatArray,
  spec: AttentionSpec,
  [dq, dk, dv]: readonly [FloatArray, FloatArray, FloatArray],
): void {
  const { b, t, h, hd, s, hkv, group } = sizesOf(qShape, kShape);
  const rowStride = hkv * hd;
  const p = new Float64Array(s);
  const ds = new Float64Array(s);
  for (let bi = 0; bi < b; bi++) {
    for (let row = 0; row < t; row++) {
      const { start, end } = visibleKeys(spec, bi, row, s);
      for (let head = 0; head < h; head++) {
        const kvBase = bi * s * rowStride + Math.floor(head / group) * hd;
        const qo = ((bi * t + row) * h + head) * hd;
        const sum = visibleWeights(q, qo, k, kvBase, rowStride, hd, start, end, spec.scale, p);
        let weighted = 0;
        for (let j = start; j < end; j++) {
          p[j] /= sum;
          ds[j] = dot(grad, qo, v, kvBase + j * rowStride, hd);
          weighted += p[j] * ds[j];
        }
        for (let j = start; j < end; j++) {
          ds[j] = spec.scale * p[j] * (ds[j] - weighted);
          const kv = kvBase + j * rowStride;
          for (let d = 0; d < hd; d++) {
            dq[qo + d] += ds[j] * k[kv + d];
            dk[kv + d] += ds[j] * q[qo + d];
            dv[kv + d] += p[j] * grad[qo + d];
          }
        }
      }
    }
  }
}

/** attentionGrad: the WebAssembly kernel where it runs, `attentionGradKernel` elsewhere. */
export function attentionGradKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'attentionGrad'> {
  return {
    attentionGrad: (q, k, v, grad, dq, dk, dv, spec: AttentionSpec) => {
      const [qs, ks, vs, gs] = [q, k, v, grad].map((x) => ctx.get(x));
      const outs = [dq, dk, dv].map((x) => ctx.get(x));
      if (!attentionRowsInto(ctx.settings, 'backward', [qs, ks, vs, gs], q.shape, k.shape, spec, outs)) {
        const [dqs, dks, dvs] = outs.map((o) => o.f32);
        attentionGradKernel(qs.f32, q.shape, ks.f32, vs.f32, k.shape, gs.f32, spec, [dqs, dks, dvs]);
      }
    },
  };
}
