import type { AttentionSpec, Shape } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { attentionKernel } from '../src/fused/attention';
import { attentionGradKernel } from '../src/fused/attention-grad';
import { attentionRowsInto, type RowsPass } from '../src/fused/attention-rows';
import { CpuStorage } from '../src/storage';
import { cpuThreadsReady } from '../src/threads/shared-pool';
import { cpuKernelSettings } from '../src/wasm/settings';
import { wasmForTests } from './wasm-for-tests';

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
  readonly label: string;
}

const spec = (
  mask: AttentionSpec['mask'],
  offset: number,
  window = 0,
  keyLengths: number[] = [],
): AttentionSpec => ({
  mask,
  offset,
  window,
  keyLengths,
  scale: 0.3,
});
const CAUSAL = { kind: 'causal' } as const;

const CASES: Case[] = [
  {
    q: [12, 64, 4, 32],
    k: [12, 64, 4, 32],
    spec: spec(CAUSAL, 0),
    label: 'the training step (4-key tiles, 2 blocks of 16 a row)',
  },
  {
    q: [3, 9, 4, 8],
    k: [3, 9, 2, 8],
    spec: spec(CAUSAL, 0),
    label: 'grouped heads, short rows (keys one at a time)',
  },
  {
    q: [2, 37, 2, 12],
    k: [2, 40, 1, 12],
    spec: spec(CAUSAL, 3),
    label: 'multi-query after 3 cached, hd 12 (single vectors)',
  },
  {
    q: [2, 11, 4, 20],
    k: [2, 30, 2, 20],
    spec: spec(CAUSAL, 0, 4, [9, 11]),
    label: 'a window, key lengths, a longer cache',
  },
  {
    q: [2, 6, 4, 16],
    k: [2, 11, 2, 16],
    spec: spec({ kind: 'none' }, 0),
    label: 'bidirectional over 11 keys',
  },
  { q: [2, 7, 2, 8], k: [2, 7, 1, 8], spec: spec({ kind: 'prefix', length: 3 }, 0), label: 'prefix 3' },
  {
    q: [3, 70, 2, 4],
    k: [3, 70, 1, 4],
    spec: spec(CAUSAL, 0, 0, [0, 70, 33]),
    label: 'a batch row with no key, a padded one',
  },
  {
    q: [1, 130, 12, 64],
    k: [1, 130, 12, 64],
    spec: spec(CAUSAL, 0),
    label: 'one batch row, many heads (rows split across chunks)',
  },
];

/**
 * The rows kernel's output for `pass` on `threads` threads, and the JavaScript kernel's (the backward's dq, dk and dv
 * one after another): the forward's output first filled with NaN (it must write everything), the backward's with
 * 0.25 (it adds to them).
 */
function run(c: Case, pass: RowsPass, threads: number): { got: Float32Array; want: Float32Array } {
  const [qn, kn] = [c.q, c.k].map((s) => s.reduce((a, b) => a * b, 1));
  const [q, k, v, g] = [filled(qn, 1), filled(kn, 2), filled(kn, 3), filled(qn, 4)];
  const sizes = pass === 'forward' ? [qn] : [qn, kn, kn];
  const outs = sizes.map((n) => new CpuStorage('f32', n));
  const start = pass === 'forward' ? Number.NaN : 0.25;
  for (const o of outs) o.f32.fill(start);
  const inputs = pass === 'forward' ? [q, k, v] : [q, k, v, g];
  expect(attentionRowsInto(cpuKernelSettings({ threads }), pass, inputs, c.q, c.k, c.spec, outs)).toBe(true);
  const wants = sizes.map((n) => new Float32Array(n).fill(start));
  if (pass === 'forward') attentionKernel(q.f32, c.q, k.f32, v.f32, c.k, c.spec, wants[0]);
  else attentionGradKernel(q.f32, c.q, k.f32, v.f32, c.k, g.f32, c.spec, [wants[0], wants[1], wants[2]]);
  const joined = (parts: readonly ArrayLike<number>[]) =>
    Float32Array.from(parts.flatMap((p) => Array.from(p)));
  const got = joined(outs.map((o) => o.f32));
  for (const s of [q, k, v, g, ...outs]) s.free();
  return { got, want: joined(wants) };
}

describe.skipIf(!wasmForTests())(
  'attention query by query (WebAssembly) matches the JavaScript kernels',
  () => {
    for (const pass of ['forward', 'backward'] as const) {
      for (const c of CASES) {
        it(`${pass}, ${c.label}: q [${c.q}], kv [${c.k}]`, () => {
          const { got, want } = run(c, pass, 1);
          let worst = 0;
          for (let i = 0; i < want.length; i++)
            worst = Math.max(worst, Math.abs(got[i] - want[i]) / (1 + Math.abs(want[i])));
          expect(worst).toBeLessThan(2e-5);
        });
      }
      it(`${pass}: the same bits on two threads as on one, whatever the split`, async () => {
        expect(await cpuThreadsReady(cpuKernelSettings({ threads: 2 }))).toBe(2);
        for (const c of [CASES[0], CASES[CASES.length - 1]]) {
          expect(run(c, pass, 2).got).toEqual(run(c, pass, 1).got);
        }
      });
    }

    it('declines a head size that is not a multiple of 4, computing nothing', () => {
      const [q, k, v] = [filled(12, 1), filled(12, 2), filled(12, 3)];
      const out = new CpuStorage('f32', 12);
      const settings = cpuKernelSettings({ threads: 1 });
      expect(
        attentionRowsInto(settings, 'forward', [q, k, v], [1, 2, 2, 3], [1, 2, 2, 3], spec(CAUSAL, 0), [out]),
      ).toBe(false);
      expect(Array.from(out.values)).toEqual(new Array(12).fill(0));
      for (const s of [q, k, v, out]) s.free();
    });
  },
);
