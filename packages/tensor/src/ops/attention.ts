import { arange, full } from '../creation';
import { assertDType } from '../dtype';
import { add, compare, mul, where } from '../elementwise';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import { permute } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { softmax } from './softmax';

/** Options of scaled dot-product attention. */
export interface AttentionSpec {
  /** Mask keys after each query's position. */
  readonly causal: boolean;
  /** Position of the first query among the keys (keys already in a cache); query t sees keys s <= offset + t. */
  readonly offset: number;
  /** Multiplier of the scores, usually 1/sqrt(headDim). */
  readonly scale: number;
}

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd]; query heads h share kv head floor(h / (H / Hkv)).
 * The score softmax goes through the dispatcher: the backend's fused kernel (with its own
 * backward rule while recording) where there is one, else the softmax composite.
 */
function attend(q: Tensor, k: Tensor, v: Tensor, { causal, offset, scale }: AttentionSpec): Tensor {
  return scope(() => {
    const [b, t, h, hd] = q.shape;
    const s = k.shape[1];
    const hkv = k.shape[2];
    const group = h / hkv;
    const scaled = mul(q, scale).reshape([b, t, hkv, group, hd]); // [B, T, Hkv, g, hd]
    const qg = permute(scaled, [0, 2, 3, 1, 4]).reshape([b, hkv, group * t, hd]); // [B, Hkv, g*T, hd]
    const kh = permute(k, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    const vh = permute(v, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    let scores = matmul(qg, kh, { transB: true }).reshape([b, hkv, group, t, s]); // [B, Hkv, g, T, S]
    if (causal) {
      const queryPos = arange(t, offset, 1, { backend: q.backend, dtype: 'i32' }).reshape([t, 1]); // [T, 1]
      const keyPos = arange(s, 0, 1, { backend: q.backend, dtype: 'i32' }).reshape([1, s]); // [1, S]
      const zero = full([], 0, { backend: q.backend });
      const bias = where(compare('le', keyPos, queryPos), zero, Number.NEGATIVE_INFINITY); // [T, S]
      scores = add(scores, bias);
    }
    const probs = softmax(scores, -1).reshape([b, hkv, group * t, s]); // [B, Hkv, g*T, S]
    const out = matmul(probs, vh).reshape([b, hkv, group, t, hd]); // [B, Hkv, g, T, hd]
    return permute(out, [0, 3, 1, 2, 4]).reshape([b, t, h, hd]); // [B, T, H, hd]
  });
}

interface AttentionCase {
  readonly b: number;
  readonly t: number;
  readonly s: number;
  readonly h: number;
  readonly hkv: number;
  readonly hd: number;
  readonly causal?: boolean;
  readonly label: string;
}

/**
 * Scaled dot-product attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] with Hkv
 * dividing H; result [B, T, H, hd]; kernel: `attention(q, k, v, spec)`. While recording it
 * runs as its composite, whose softmax is fused and has a rule.
 */
export const attentionOp = fusedOp({
  name: 'attention',
  inputs: ['q', 'k', 'v'],
  outputShape: ([q]) => q.shape,
  composite: attend,
  gradient: 'through-composite',
  cases: casesOver<AttentionCase, [AttentionSpec]>(
    [
      { b: 1, t: 1, s: 1, h: 1, hkv: 1, hd: 4, label: 'single token' },
      { b: 2, t: 7, s: 7, h: 4, hkv: 4, hd: 16, label: 'multi-head prefill' },
      { b: 1, t: 9, s: 9, h: 8, hkv: 4, hd: 8, label: 'grouped-query prefill' },
      { b: 2, t: 5, s: 5, h: 6, hkv: 1, hd: 12, label: 'multi-query prefill' },
      { b: 1, t: 1, s: 37, h: 8, hkv: 4, hd: 8, label: 'decode one token after 36 cached (offset 36)' },
      { b: 2, t: 3, s: 20, h: 6, hkv: 2, hd: 48, label: 'three queries after 17 cached keys' },
      { b: 1, t: 130, s: 130, h: 4, hkv: 2, hd: 32, label: 'long prefill' },
      { b: 1, t: 257, s: 257, h: 2, hkv: 1, hd: 64, label: 'prefill past a workgroup of 256' },
      { b: 2, t: 6, s: 11, h: 4, hkv: 2, hd: 16, causal: false, label: 'non-causal cross attention' },
    ],
    ({ b, t, s, h, hkv, hd, causal = true, label }) => ({
      label: `${label}: q ${shapeLabel([b, t, h, hd])}, kv ${shapeLabel([b, s, hkv, hd])}`,
      inputs: [{ shape: [b, t, h, hd] }, { shape: [b, s, hkv, hd] }, { shape: [b, s, hkv, hd] }],
      params: [{ causal, offset: s - t, scale: 1 / Math.sqrt(hd) }],
      tol: REDUCTION,
    }),
  ),
});

export interface AttentionOptions {
  /** Mask future keys (default true). */
  readonly causal?: boolean;
  /** Position of the first query among the keys; defaults to S - T (queries are the newest keys). */
  readonly offset?: number;
  /** Score multiplier; defaults to 1/sqrt(headDim). */
  readonly scale?: number;
}

/**
 * Scaled dot-product attention. q [B, T, H, hd], k and v [B, S, Hkv, hd] where Hkv divides H
 * (grouped-query heads: query head h reads kv head floor(h * Hkv / H)). Result [B, T, H, hd].
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, options: AttentionOptions = {}): Tensor {
  sameBackend('attention', q, k, v);
  for (const t of [q, k, v]) assertDType('attention', t.dtype, ['f32']);
  const shapes = `q ${showShape(q.shape)}, k ${showShape(k.shape)}, v ${showShape(v.shape)}`;
  if (q.rank !== 4 || k.rank !== 4 || !shapesEqual(k.shape, v.shape)) {
    throw new Error(
      `attention: expected q [B, T, H, hd] and k, v [B, S, Hkv, hd] of equal shape; got ${shapes}`,
    );
  }
  const [b, t, h, hd] = q.shape;
  const [kb, s, hkv, khd] = k.shape;
  if (kb !== b || khd !== hd || hkv === 0 || h % hkv !== 0) {
    throw new Error(`attention: batch and head size must match and Hkv must divide H; got ${shapes}`);
  }
  const causal = options.causal ?? true;
  const offset = options.offset ?? s - t;
  if (causal && (!Number.isInteger(offset) || offset < 0 || offset + t > s)) {
    throw new Error(
      `attention: offset ${offset} with ${t} queries needs ${offset + t} keys, got ${s}; ${shapes}`,
    );
  }
  const scale = options.scale ?? 1 / Math.sqrt(hd);
  return runFused(attentionOp, [q, k, v], [{ causal, offset, scale }]);
}
