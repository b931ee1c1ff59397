import type { AttentionSpec, Shape } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { attentionKernel } from '../src/fused/attention';
import { attentionGemmInto } from '../src/fused/attention-gemm';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

/** Seeded values in [-2, 2) in a new heap storage. */
function filled(n: number, seed: number): CpuStorage {
  const s = new CpuStorage('f32', n);
  for (let i = 0; i < n; i++) s.values[i] = 4 * ((Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453) % 0.5);
  return s;
}

interface Case {
  readonly q: Shape;
  readonly k: Shape;
  readonly spec: AttentionSpec;
  /** Scores held at once: small enough that the batch rows or their query rows go in several rounds. */
  readonly most: number;
  readonly label: string;
}

const causal = (offset: number, window = 0, keyLengths: number[] = []): AttentionSpec => ({
  mask: { kind: 'causal' },
  offset,
  window,
  keyLengths,
  scale: 0.3,
});

describe.skipIf(!wasmForTests())(
  'attention of several queries through GEMM matches the JavaScript kernel',
  () => {
    const cases: Case[] = [
      {
        q: [3, 9, 4, 8],
        k: [3, 9, 2, 8],
        spec: causal(0),
        most: 4 * 9 * 9,
        label: 'one batch row per round',
      },
      {
        q: [2, 37, 2, 12],
        k: [2, 40, 1, 12],
        spec: causal(3),
        most: 2 * 40 * 5,
        label: 'blocks of 5 query rows',
      },
      {
        q: [2, 11, 4, 8],
        k: [2, 30, 2, 8],
        spec: causal(0, 4, [9, 11]),
        most: 4 * 11 * 3,
        label: 'blocks of 3 rows, a window, key lengths and a cache longer than the prompt',
      },
      { q: [1, 6, 2, 4], k: [1, 6, 2, 4], spec: causal(0), most: 1 << 22, label: 'one round' },
      {
        q: [2, 100, 4, 8],
        k: [2, 130, 2, 8],
        spec: causal(30),
        most: 1 << 22,
        label: 'causal blocks of 32 query rows, each over the keys it sees, after 30 cached',
      },
      {
        q: [3, 70, 2, 4],
        k: [3, 70, 1, 4],
        spec: causal(0, 0, [0, 70, 33]),
        most: 2 * 32 * 70,
        label: 'a batch row with no key (its rounds have no keys) and a padded one, one row per round',
      },
    ];
    for (const c of cases) {
      it(`${c.label}: q [${c.q}], kv [${c.k}]`, () => {
        const [qn, kn] = [c.q, c.k].map((s) => s.reduce((a, b) => a * b, 1));
        const [q, k, v] = [filled(qn, 1), filled(kn, 2), filled(kn, 3)];
        const out = new CpuStorage('f32', qn);
        out.f32.fill(Number.NaN);
        expect(attentionGemmInto(SETTINGS, q, c.q, k, v, c.k, c.spec, out, c.most)).toBe(true);
        const want = new Float32Array(qn);
        attentionKernel(q.f32, c.q, k.f32, v.f32, c.k, c.spec, want);
        let worst = 0;
        for (let i = 0; i < qn; i++) worst = Math.max(worst, Math.abs(out.values[i] - want[i]));
        expect(worst).toBeLessThan(1e-5);
        for (const s of [q, k, v, out]) s.free();
      });
    }

    it('declines when one query row of scores exceeds the round, computing nothing', () => {
      const [q, k, v] = [filled(2 * 8, 1), filled(2 * 8, 2), filled(2 * 8, 3)];
      const out = new CpuStorage('f32', 16);
      expect(attentionGemmInto(SETTINGS, q, [1, 2, 2, 4], k, v, [1, 2, 2, 4], causal(0), out, 3)).toBe(false);
      expect(Array.from(out.values)).toEqual(new Array(16).fill(0));
      for (const s of [q, k, v, out]) s.free();
    });
  },
);
