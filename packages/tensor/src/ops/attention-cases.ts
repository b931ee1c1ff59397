import type { AttentionMask, AttentionSpec } from './attention-mask';
import { casesOver, type FusedCases, type InputSpec, REDUCTION, shapeLabel } from './case';

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
const CAUSAL: AttentionMask = { kind: 'causal' };

/** The attention ops' conformance shapes: every mask, grouped heads, windows, padding, caches and empty rows. */
const SHAPES: readonly [AttentionCase, ...AttentionCase[]] = [
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
];

/**
 * The conformance cases of `attention` (q, k, v) and, with `gradInput`, of `attentionGrad` (q, k, v, the gradient
 * of the output shaped like q, then dq, dk and dv, which it overwrites).
 */
export function attentionCases(gradInput: boolean): FusedCases<[AttentionSpec]> {
  return casesOver(
    SHAPES,
    ({ b, t, s, h, hkv, hd, mask = CAUSAL, window = 0, keyLengths = [], offset = s - t, label }) => {
      const q: InputSpec = { shape: [b, t, h, hd] };
      const kv: InputSpec = { shape: [b, s, hkv, hd] };
      return {
        label: `${label}: q ${shapeLabel([b, t, h, hd])}, kv ${shapeLabel([b, s, hkv, hd])}`,
        inputs: gradInput ? [q, kv, kv, q, q, kv, kv] : [q, kv, kv],
        params: [{ mask, offset, window, keyLengths, scale: 1 / Math.sqrt(hd) }],
        tol: REDUCTION,
      };
    },
  );
}
