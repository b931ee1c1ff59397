import { tensor } from '../creation';
import { add, mul } from '../elementwise';
import { matmul } from '../matmul';
import { permute } from '../movement';
import type { Tensor } from '../tensor';
import { type AttentionSpec, visibleKeys } from './attention-mask';
import { softmax } from './softmax';

/**
 * The additive score mask [B or 1, 1, 1, T, S] of `spec` (0 where a key is visible, -inf elsewhere) and, when some
 * query sees no key at all, the row scale [B, 1, 1, T, 1] (0 for those rows, whose bias is 0 so their softmax
 * stays finite, 1 elsewhere). Built on the host: the mask is plain numbers.
 */
function maskTensors(spec: AttentionSpec, b: number, t: number, s: number, q: Tensor): Tensor[] {
  const rows = spec.keyLengths.length > 0 ? b : 1;
  const bias = new Float32Array(rows * t * s);
  const rowScale = new Float32Array(rows * t);
  let empty = false;
  for (let bi = 0; bi < rows; bi++) {
    for (let p = 0; p < t; p++) {
      const { start, end } = visibleKeys(spec, bi, p, s);
      const row = (bi * t + p) * s;
      if (start >= end) {
        empty = true;
        continue;
      }
      rowScale[bi * t + p] = 1;
      bias.fill(Number.NEGATIVE_INFINITY, row, row + start);
      bias.fill(Number.NEGATIVE_INFINITY, row + end, row + s);
    }
  }
  const options = { backend: q.backend };
  const biasTensor = tensor(bias, [rows, 1, 1, t, s], options); // [B or 1, 1, 1, T, S]
  return empty ? [biasTensor, tensor(rowScale, [rows, 1, 1, t, 1], options)] : [biasTensor]; // [B or 1, 1, 1, T, 1]
}

/** Whether `spec` hides any key from any query (else the scores need no mask). */
function masksAnything(spec: AttentionSpec, b: number, t: number, s: number): boolean {
  for (let bi = 0; bi < (spec.keyLengths.length > 0 ? b : 1); bi++) {
    for (let p = 0; p < t; p++) {
      const { start, end } = visibleKeys(spec, bi, p, s);
      if (start > 0 || end < s) return true;
    }
  }
  return false;
}

/** Attention's operands by (batch row, kv head), and its weights. */
export interface AttentionWeights {
  /** q times the scale, each kv head's g query heads one after another: [B, Hkv, g*T, hd]. */
  readonly qg: Tensor;
  /** [B, Hkv, S, hd]. */
  readonly kh: Tensor;
  /** [B, Hkv, S, hd]. */
  readonly vh: Tensor;
  /** The softmax of the visible scores, 0 on hidden keys and on rows that see none: [B, Hkv, g*T, S]. */
  readonly probs: Tensor;
}

/**
 * The composite of attention up to its weights, for q [B, T, H, hd] and k, v [B, S, Hkv, hd] (query heads h share
 * kv head floor(h / (H / Hkv))). The score softmax goes through the dispatcher: the backend's fused kernel (with
 * its own backward rule while recording) where there is one, else the softmax composite. Call it inside a scope.
 */
export function attentionWeights(q: Tensor, k: Tensor, v: Tensor, spec: AttentionSpec): AttentionWeights {
  const [b, t] = q.shape;
  const [, s, hkv] = k.shape;
  const group = q.shape[2] / hkv;
  const qg = toGroups(mul(q, spec.scale), hkv); // [B, Hkv, g*T, hd]
  const kh = permute(k, [0, 2, 1, 3]); // [B, Hkv, S, hd]
  const vh = permute(v, [0, 2, 1, 3]); // [B, Hkv, S, hd]
  let scores = matmul(qg, kh, { transB: true }).reshape([b, hkv, group, t, s]); // [B, Hkv, g, T, S]
  const [bias, rowScale] = masksAnything(spec, b, t, s) ? maskTensors(spec, b, t, s, q) : [];
  if (bias) scores = add(scores, bias);
  let probs = softmax(scores, -1); // [B, Hkv, g, T, S]
  if (rowScale) probs = mul(probs, rowScale);
  return { qg, kh, vh, probs: probs.reshape([b, hkv, group * t, s]) }; // [B, Hkv, g*T, S]
}

/** x [B, T, H, hd] by kv head: [B, Hkv, g*T, hd], each kv head's g query heads one after another. */
export function toGroups(x: Tensor, hkv: number): Tensor {
  const [b, t, h, hd] = x.shape;
  const grouped = x.reshape([b, t, hkv, h / hkv, hd]); // [B, T, Hkv, g, hd]
  return permute(grouped, [0, 2, 3, 1, 4]).reshape([b, hkv, (h / hkv) * t, hd]); // [B, Hkv, g*T, hd]
}

/** A gradient or output by kv head, [B, Hkv, g*T, hd], back in q's layout [B, T, H, hd]. */
export function fromGroups(x: Tensor, qShape: readonly number[], hkv: number): Tensor {
  const [b, t, h, hd] = qShape;
  const grouped = x.reshape([b, hkv, h / hkv, t, hd]); // [B, Hkv, g, T, hd]
  return permute(grouped, [0, 3, 1, 2, 4]).reshape([b, t, h, hd]); // [B, T, H, hd]
}
