import { tensor } from '../creation';
import { assertDType } from '../dtype';
import { add, mul } from '../elementwise';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import { permute } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { type AttentionMask, type AttentionSpec, visibleKeys } from './attention-mask';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
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

/**
 * q [B, T, H, hd], k and v [B, S, Hkv, hd]; query heads h share kv head floor(h / (H / Hkv)).
 * The score softmax goes through the dispatcher: the backend's fused kernel (with its own
 * backward rule while recording) where there is one, else the softmax composite.
 */
function attend(q: Tensor, k: Tensor, v: Tensor, spec: AttentionSpec): Tensor {
  return scope(() => {
    const [b, t, h, hd] = q.shape;
    const s = k.shape[1];
    const hkv = k.shape[2];
    const group = h / hkv;
    const scaled = mul(q, spec.scale).reshape([b, t, hkv, group, hd]); // [B, T, Hkv, g, hd]
    const qg = permute(scaled, [0, 2, 3, 1, 4]).reshape([b, hkv, group * t, hd]); // [B, Hkv, g*T, hd]
    const kh = permute(k, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    const vh = permute(v, [0, 2, 1, 3]); // [B, Hkv, S, hd]
    let scores = matmul(qg, kh, { transB: true }).reshape([b, hkv, group, t, s]); // [B, Hkv, g, T, S]
    const [bias, rowScale] = masksAnything(spec, b, t, s) ? maskTensors(spec, b, t, s, q) : [];
    if (bias) scores = add(scores, bias);
    let probs = softmax(scores, -1); // [B, Hkv, g, T, S]
    if (rowScale) probs = mul(probs, rowScale);
    const out = matmul(probs.reshape([b, hkv, group * t, s]), vh).reshape([b, hkv, group, t, hd]); // [B, Hkv, g, T, hd]
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
  readonly mask?: AttentionMask;
  readonly window?: number;
  readonly keyLengths?: readonly number[];
  /** Position of the first query (default S - T: the queries are the newest keys). */
  readonly offset?: number;
  readonly label: string;
}

const NONE: AttentionMask = { kind: 'none' };

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
      { b: 2, t: 1, s: 70, h: 6, hkv: 3, hd: 48, label: 'decode one token after 69 cached, head size 48' },
      { b: 1, t: 1, s: 203, h: 4, hkv: 2, hd: 16, label: 'decode after 202 cached keys (two chunks)' },
      { b: 1, t: 1, s: 40, h: 4, hkv: 2, hd: 20, window: 9, label: 'decode one token, sliding window 9' },
      { b: 2, t: 3, s: 20, h: 6, hkv: 2, hd: 48, label: 'three queries after 17 cached keys' },
      { b: 1, t: 130, s: 130, h: 4, hkv: 2, hd: 32, label: 'long prefill' },
      { b: 1, t: 257, s: 257, h: 2, hkv: 1, hd: 64, label: 'prefill past a workgroup of 256' },
      { b: 2, t: 6, s: 11, h: 4, hkv: 2, hd: 16, mask: NONE, label: 'non-causal cross attention' },
      {
        b: 2,
        t: 7,
        s: 7,
        h: 4,
        hkv: 2,
        hd: 8,
        mask: { kind: 'prefix', length: 3 },
        label: 'prefix LM, prefix 3',
      },
      {
        b: 1,
        t: 3,
        s: 10,
        h: 2,
        hkv: 1,
        hd: 8,
        mask: { kind: 'prefix', length: 9 },
        label: 'prefix 9 reaching past the first of three queries after 7 cached',
      },
      { b: 2, t: 9, s: 9, h: 4, hkv: 2, hd: 8, window: 4, label: 'sliding window 4' },
      {
        b: 1,
        t: 2,
        s: 30,
        h: 4,
        hkv: 2,
        hd: 16,
        window: 5,
        label: 'sliding window 5, two queries after 28 cached',
      },
      {
        b: 1,
        t: 150,
        s: 150,
        h: 2,
        hkv: 1,
        hd: 16,
        window: 70,
        label: 'sliding window 70 past a chunk of 64',
      },
      {
        b: 1,
        t: 8,
        s: 8,
        h: 2,
        hkv: 2,
        hd: 4,
        mask: { kind: 'prefix', length: 5 },
        window: 3,
        label: 'prefix 5 with window 3',
      },
      {
        b: 3,
        t: 6,
        s: 6,
        h: 4,
        hkv: 2,
        hd: 8,
        mask: NONE,
        keyLengths: [6, 2, 4],
        label: 'bidirectional, padded to 6 keys (lengths 6, 2, 4)',
      },
      { b: 2, t: 5, s: 5, h: 2, hkv: 1, hd: 12, keyLengths: [3, 5], label: 'causal, padded (lengths 3, 5)' },
      {
        b: 2,
        t: 5,
        s: 24,
        h: 4,
        hkv: 2,
        hd: 8,
        offset: 0,
        label: 'prefill of 5 into a cache of 24 keys (offset 0, the rest unused)',
      },
      {
        b: 2,
        t: 3,
        s: 40,
        h: 4,
        hkv: 2,
        hd: 8,
        window: 6,
        label: 'sliding window 6, three queries after 37 cached, two rows',
      },
      {
        b: 2,
        t: 4,
        s: 70,
        h: 2,
        hkv: 1,
        hd: 8,
        mask: NONE,
        keyLengths: [0, 67],
        label: 'bidirectional, an empty row (lengths 0, 67)',
      },
      {
        b: 2,
        t: 1,
        s: 40,
        h: 8,
        hkv: 2,
        hd: 16,
        window: 8,
        keyLengths: [40, 25],
        label: 'decode with window 8 and padded rows (lengths 40, 25)',
      },
      {
        b: 2,
        t: 1,
        s: 16,
        h: 4,
        hkv: 2,
        hd: 32,
        mask: NONE,
        keyLengths: [16, 9],
        label: 'decode over ring slots, 16 and 9 filled',
      },
      {
        b: 1,
        t: 6,
        s: 6,
        h: 2,
        hkv: 1,
        hd: 4,
        window: 2,
        keyLengths: [2],
        label: 'window 2 and 2 valid keys: the last queries see none',
      },
    ],
    ({
      b,
      t,
      s,
      h,
      hkv,
      hd,
      mask = { kind: 'causal' },
      window = 0,
      keyLengths = [],
      offset = s - t,
      label,
    }) => ({
      label: `${label}: q ${shapeLabel([b, t, h, hd])}, kv ${shapeLabel([b, s, hkv, hd])}`,
      inputs: [{ shape: [b, t, h, hd] }, { shape: [b, s, hkv, hd] }, { shape: [b, s, hkv, hd] }],
      params: [{ mask, offset, window, keyLengths, scale: 1 / Math.sqrt(hd) }],
      tol: REDUCTION,
    }),
  ),
});

/** Options of `attention`; every field is optional. */
export interface AttentionOptions {
  /** Which keys each query sees (default `{ kind: 'causal' }`). */
  readonly mask?: AttentionMask;
  /** Position of the first query among the keys; defaults to S - T (queries are the newest keys). */
  readonly offset?: number;
  /** Sliding window W: the query at position p sees only keys s > p - W (default: none). */
  readonly window?: number;
  /** Key padding: batch row b sees only its first keyLengths[b] keys (one entry per row; default: all S). */
  readonly keyLengths?: readonly number[];
  /** Score multiplier; defaults to 1/sqrt(headDim). */
  readonly scale?: number;
}

function checkCount(what: string, value: number, max: number, shapes: string, hint: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new Error(`attention: ${what} must be an integer in [0, ${max}], got ${value}; ${shapes}; ${hint}`);
  }
}

/**
 * Scaled dot-product attention. q [B, T, H, hd], k and v [B, S, Hkv, hd] where Hkv divides H
 * (grouped-query heads: query head h reads kv head floor(h * Hkv / H)). Result [B, T, H, hd].
 * The query t (at position offset + t) of batch row b sees the keys the mask allows, limited to the
 * last `window` positions and to the row's `keyLengths[b]` valid keys; a query that sees no key gets 0.
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
  const mask = options.mask ?? { kind: 'causal' };
  if (mask.kind !== 'none' && mask.kind !== 'causal' && mask.kind !== 'prefix') {
    throw new Error(
      `attention: mask.kind must be 'none', 'causal' or 'prefix', got ${String((mask as { kind: unknown }).kind)}`,
    );
  }
  if (mask.kind === 'prefix')
    checkCount('mask.length (the prefix)', mask.length, s, shapes, 'the prefix is among the keys');
  const window = options.window ?? 0;
  checkCount('window', window, Number.MAX_SAFE_INTEGER, shapes, 'pass 0 or leave it out for no window');
  const offset = options.offset ?? s - t;
  if ((mask.kind !== 'none' || window > 0) && (!Number.isInteger(offset) || offset < 0 || offset + t > s)) {
    throw new Error(
      `attention: offset ${offset} with ${t} queries needs ${offset + t} keys, got ${s}; ${shapes}`,
    );
  }
  const keyLengths = options.keyLengths ?? [];
  if (keyLengths.length !== 0 && keyLengths.length !== b) {
    throw new Error(
      `attention: keyLengths needs one length per batch row (${b}), got ${keyLengths.length}; ${shapes}`,
    );
  }
  for (const length of keyLengths)
    checkCount('each of keyLengths', length, s, shapes, 'a row holds at most S keys');
  const scale = options.scale ?? 1 / Math.sqrt(hd);
  return runFused(
    attentionOp,
    [q, k, v],
    [{ mask, offset: mask.kind !== 'none' || window > 0 ? offset : 0, window, keyLengths, scale }],
  );
}
