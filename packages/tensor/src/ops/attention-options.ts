import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { type Shape, shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import type { AttentionMask, AttentionSpec } from './attention-mask';

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

function checkCount(
  op: string,
  what: string,
  value: number,
  max: number,
  shapes: () => string,
  hint: string,
): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new Error(`${op}: ${what} must be an integer in [0, ${max}], got ${value}; ${shapes()}; ${hint}`);
  }
}

/**
 * The spec of attention over q [B, T, H, hd] and k, v [B, S, Hkv, hd] from `options`, after checking the shapes,
 * dtypes and options (`op` names the caller in errors).
 */
export function attentionSpec(
  op: string,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  options: AttentionOptions,
): AttentionSpec {
  sameBackend(op, q, k, v);
  for (const t of [q, k, v]) assertDType(op, t.dtype, ['f32']);
  return attentionSpecOfShapes(op, q.shape, k.shape, v.shape, options);
}

/** `attentionSpec` from the shapes of q, k and v alone (for ops whose queries are computed inside the kernel). */
export function attentionSpecOfShapes(
  op: string,
  qShape: Shape,
  kShape: Shape,
  vShape: Shape,
  options: AttentionOptions,
): AttentionSpec {
  // Named in errors only: built when one is thrown, not on every call.
  const shapes = () => `q ${showShape(qShape)}, k ${showShape(kShape)}, v ${showShape(vShape)}`;
  if (qShape.length !== 4 || kShape.length !== 4 || !shapesEqual(kShape, vShape)) {
    throw new Error(
      `${op}: expected q [B, T, H, hd] and k, v [B, S, Hkv, hd] of equal shape; got ${shapes()}`,
    );
  }
  const [b, t, h, hd] = qShape;
  const [kb, s, hkv, khd] = kShape;
  if (kb !== b || khd !== hd || hkv === 0 || h % hkv !== 0) {
    throw new Error(`${op}: batch and head size must match and Hkv must divide H; got ${shapes()}`);
  }
  const mask = options.mask ?? { kind: 'causal' };
  if (mask.kind !== 'none' && mask.kind !== 'causal' && mask.kind !== 'prefix') {
    throw new Error(
      `${op}: mask.kind must be 'none', 'causal' or 'prefix', got ${String((mask as { kind: unknown }).kind)}`,
    );
  }
  if (mask.kind === 'prefix')
    checkCount(op, 'mask.length (the prefix)', mask.length, s, shapes, 'the prefix is among the keys');
  const window = options.window ?? 0;
  checkCount(op, 'window', window, Number.MAX_SAFE_INTEGER, shapes, 'pass 0 or leave it out for no window');
  const offset = options.offset ?? s - t;
  if ((mask.kind !== 'none' || window > 0) && (!Number.isInteger(offset) || offset < 0 || offset + t > s)) {
    throw new Error(
      `${op}: offset ${offset} with ${t} queries needs ${offset + t} keys, got ${s}; ${shapes()}`,
    );
  }
  const keyLengths = options.keyLengths ?? [];
  if (keyLengths.length !== 0 && keyLengths.length !== b) {
    throw new Error(
      `${op}: keyLengths needs one length per batch row (${b}), got ${keyLengths.length}; ${shapes()}`,
    );
  }
  for (const length of keyLengths)
    checkCount(op, 'each of keyLengths', length, s, shapes, 'a row holds at most S keys');
  const scale = options.scale ?? 1 / Math.sqrt(hd);
  return { mask, offset: mask.kind !== 'none' || window > 0 ? offset : 0, window, keyLengths, scale };
}
