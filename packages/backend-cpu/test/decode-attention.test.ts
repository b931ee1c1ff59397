import type { AttentionMask, AttentionSpec } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { decodeAttentionInto } from '../src/fused/decode-attention';
import { CpuStorage } from '../src/storage';
import { cpuThreadsReady } from '../src/threads/shared-pool';
import { cpuKernelSettings } from '../src/wasm/settings';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

let seed = 11;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function storageOf(values: Float32Array): CpuStorage {
  const s = new CpuStorage('f32', values.length, false);
  s.f32.set(values);
  return s;
}

/** Plain float64 attention of one query per row over keys [start, end): no code shared with the kernels. */
function reference(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  [b, h, hkv, hd, s]: readonly number[],
  ranges: readonly { start: number; end: number }[],
  scale: number,
): Float64Array {
  const out = new Float64Array(b * h * hd);
  for (let row = 0; row < b; row++) {
    const { start, end } = ranges[row];
    for (let head = 0; head < h; head++) {
      const g = Math.floor(head / (h / hkv));
      const at = (j: number, d: number) => ((row * s + j) * hkv + g) * hd + d;
      const scores: number[] = [];
      for (let j = start; j < end; j++) {
        let dot = 0;
        for (let d = 0; d < hd; d++) dot += q[(row * h + head) * hd + d] * k[at(j, d)];
        scores.push(dot * scale);
      }
      const max = Math.max(...scores);
      const weights = scores.map((x) => Math.exp(x - max));
      const total = weights.reduce((a, x) => a + x, 0);
      for (let d = 0; d < hd; d++) {
        let sum = 0;
        for (let j = start; j < end; j++) sum += weights[j - start] * v[at(j, d)];
        out[(row * h + head) * hd + d] = end > start ? sum / total : 0;
      }
    }
  }
  return out;
}

interface Case {
  readonly b: number;
  readonly s: number;
  readonly h: number;
  readonly hkv: number;
  readonly hd: number;
  readonly offset: number;
  readonly mask?: AttentionMask;
  readonly window?: number;
  readonly keyLengths?: readonly number[];
}

function check({ b, s, h, hkv, hd, offset, mask, window, keyLengths }: Case, threads: number): void {
  const spec: AttentionSpec = {
    mask: mask ?? { kind: 'causal' },
    offset,
    window: window ?? 0,
    keyLengths: keyLengths ?? [],
    scale: 1 / Math.sqrt(hd),
  };
  const q = Float32Array.from({ length: b * h * hd }, () => (random() - 0.5) * 4);
  const k = Float32Array.from({ length: b * s * hkv * hd }, () => (random() - 0.5) * 4);
  const v = Float32Array.from({ length: b * s * hkv * hd }, () => random() - 0.5);
  const [qs, ks, vs] = [storageOf(q), storageOf(k), storageOf(v)];
  const out = new CpuStorage('f32', b * h * hd, false);
  out.f32.fill(Number.NaN);
  const settings = cpuKernelSettings({ threads });
  expect(decodeAttentionInto(settings, qs, [b, 1, h, hd], ks, vs, [b, s, hkv, hd], spec, out)).toBe(true);
  // The visible keys, written out here rather than taken from visibleKeys.
  const ranges = Array.from({ length: b }, (_, row) => {
    const upper =
      spec.mask.kind === 'none'
        ? s
        : Math.max(offset + 1, spec.mask.kind === 'prefix' ? spec.mask.length : 0);
    const end = Math.min(upper, s, spec.keyLengths[row] ?? s);
    return { start: spec.window > 0 ? Math.max(0, offset - spec.window + 1) : 0, end };
  });
  const want = reference(q, k, v, [b, h, hkv, hd, s], ranges, spec.scale);
  for (let i = 0; i < want.length; i++) {
    expect(Math.abs(out.f32[i] - want[i]), `element ${i} (head ${Math.floor(i / hd) % h})`).toBeLessThan(
      2e-6 + 2e-5 * Math.abs(want[i]),
    );
  }
  for (const x of [qs, ks, vs, out]) x.free();
}

const CASES: Case[] = [
  { b: 1, s: 1, h: 1, hkv: 1, hd: 4, offset: 0 },
  { b: 1, s: 37, h: 8, hkv: 4, hd: 8, offset: 36 },
  // stories15M: hd 48 is three blocks of 16; a cache longer than the visible keys.
  { b: 1, s: 256, h: 6, hkv: 6, hd: 48, offset: 130 },
  // hd 20: one block of 16 and one vector; multi-query; visible count not a multiple of 4.
  { b: 2, s: 19, h: 4, hkv: 1, hd: 20, offset: 18 },
  { b: 1, s: 300, h: 4, hkv: 2, hd: 64, offset: 299 },
  // 129 keys: a chunk of 128, then one of a single key (the count mod 4 one by one).
  { b: 1, s: 130, h: 3, hkv: 3, hd: 8, offset: 128 },
  { b: 2, s: 40, h: 2, hkv: 2, hd: 12, offset: 30, window: 7 },
  { b: 3, s: 9, h: 2, hkv: 1, hd: 16, offset: 8, mask: { kind: 'none' }, keyLengths: [9, 0, 3] },
  { b: 1, s: 12, h: 2, hkv: 1, hd: 8, offset: 2, mask: { kind: 'prefix', length: 10 } },
];

describe.skipIf(!wasmForTests())(
  'attend_one_f32 (one query over the cache) against a float64 reference',
  () => {
    for (const c of CASES) {
      const extras = `${c.window ? `, window ${c.window}` : ''}${c.mask ? `, mask ${c.mask.kind}` : ''}`;
      it(`b ${c.b}, ${c.s} keys, ${c.h}/${c.hkv} heads of ${c.hd}, offset ${c.offset}${extras}`, () =>
        check(c, 1));
    }

    it('gives the same results with the heads split across two threads (a long cache)', async () => {
      expect(await cpuThreadsReady(cpuKernelSettings({ threads: 2 }))).toBe(2);
      check({ b: 1, s: 2048, h: 8, hkv: 2, hd: 64, offset: 2047 }, 2);
      check({ b: 1, s: 1500, h: 3, hkv: 3, hd: 48, offset: 1400 }, 2);
    });

    it('gives the same results with a batch of short ragged rows split across two threads (a server step)', async () => {
      expect(await cpuThreadsReady(cpuKernelSettings({ threads: 2 }))).toBe(2);
      const keyLengths = [256, 0, 17, 200, 1, 256, 90, 3];
      check({ b: 8, s: 256, h: 6, hkv: 3, hd: 48, offset: 255, mask: { kind: 'none' }, keyLengths }, 2);
      check({ b: 3, s: 64, h: 4, hkv: 4, hd: 16, offset: 63 }, 2);
    });

    it('declines what it does not cover, computing nothing', () => {
      const spec: AttentionSpec = {
        mask: { kind: 'causal' },
        offset: 0,
        window: 0,
        keyLengths: [],
        scale: 1,
      };
      const x = new CpuStorage('f32', 2 * 6, false);
      const out = new CpuStorage('f32', 2 * 6, false);
      out.f32.fill(7);
      // Two queries, and hd 6 (not a multiple of 4).
      expect(decodeAttentionInto(SETTINGS, x, [1, 2, 1, 6], x, x, [1, 2, 1, 6], spec, out)).toBe(false);
      expect(decodeAttentionInto(SETTINGS, x, [2, 1, 1, 6], x, x, [2, 1, 1, 6], spec, out)).toBe(false);
      expect(out.f32.every((value) => value === 7)).toBe(true);
      x.free();
      out.free();
    });
  },
);
