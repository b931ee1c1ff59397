import { readFileSync } from 'node:fs';
import { CpuBackend } from '@loom/backend-cpu';
import { ropeInverseFrequencies, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  makeConfig,
  type RopeSpec,
  RotaryEmbedding,
  ropeFrequencies,
  ropeScalingProblems,
  TransformerLM,
} from '../src/index';

/** Tables from fixtures/rope-scaling.py: transformers' formulas in plain Python floats. */
const fixtures = JSON.parse(
  readFileSync(new URL('./fixtures/rope-scaling.json', import.meta.url), 'utf8'),
) as { spec: RopeSpec; seqLen: number; inverseFrequencies: number[]; scale: number }[];

describe('RoPE scaling', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  for (const { spec, seqLen, inverseFrequencies, scale } of fixtures) {
    it(`${spec.scaling?.type} hd ${spec.headDim} theta ${spec.theta} at length ${seqLen} matches the Python tables`, () => {
      const got = ropeFrequencies(spec, seqLen);
      expect(got.inverseFrequencies).toHaveLength(spec.headDim / 2);
      got.inverseFrequencies.forEach((f, i) => {
        expect(Math.abs(f - inverseFrequencies[i])).toBeLessThanOrEqual(1e-12 * inverseFrequencies[i]);
      });
      expect(got.scale).toBeCloseTo(scale, 12);
    });
  }

  it('linear scaling at position p rotates as plain RoPE at p / factor (hand-derived)', async () => {
    const spec: RopeSpec = { headDim: 4, theta: 100, maxSeqLen: 64, scaling: { type: 'linear', factor: 2 } };
    // Pairs (1, 0) and (0, 1) at position 6: angles 6 / 2 · 1 = 3 and 6 / 2 · 0.1 = 0.3.
    const x = tensor([1, 0, 0, 1], [1, 1, 1, 4]);
    const out = await new RotaryEmbedding(spec).forward(x, 6).data();
    const want = [Math.cos(3), Math.sin(3), -Math.sin(0.3), Math.cos(0.3)];
    out.forEach((v, i) => {
      expect(v).toBeCloseTo(want[i], 5);
    });
  });

  it('dynamic scaling is plain RoPE up to the original context and recomputed past it, per call', async () => {
    const spec: RopeSpec = {
      headDim: 8,
      theta: 10000,
      maxSeqLen: 32,
      scaling: { type: 'dynamic', factor: 2, originalMaxSeqLen: 8 },
    };
    expect(ropeFrequencies(spec, 8).inverseFrequencies).toEqual(ropeInverseFrequencies(8, 10000));
    const past = ropeFrequencies(spec, 16).inverseFrequencies;
    // theta' = 10000 · (2 · 16 / 8 - 1)^(8 / 6) = 10000 · 3^(4/3).
    expect(past[1]).toBeCloseTo((10000 * 3 ** (4 / 3)) ** -0.25, 12);
    const rotary = new RotaryEmbedding(spec);
    const x = tensor([0, 1, 0, 1, 0, 1, 0, 1], [1, 1, 1, 8]);
    // A decode step at offset 15 (length 16) uses the length-16 table.
    const step = await rotary.forward(x, 15).data();
    expect(step[2]).toBeCloseTo(-Math.sin(15 * past[1]), 5);
    // The same position inside a 32-long call uses the length-32 table, as transformers does.
    const longer = ropeFrequencies(spec, 32).inverseFrequencies[1];
    expect(longer).toBeLessThan(past[1]);
  });

  it('refuses bad scalings by name', () => {
    expect(ropeScalingProblems({ type: 'linear', factor: 0.5 }, 64)).toEqual([
      'ropeScaling (linear): factor must be a number >= 1, got 0.5',
    ]);
    expect(
      ropeScalingProblems(
        { type: 'llama3', factor: 8, lowFreqFactor: 4, highFreqFactor: 1, originalMaxSeqLen: 128 },
        64,
      ),
    ).toEqual([
      'ropeScaling (llama3): originalMaxSeqLen must be an integer in [1, maxSeqLen=64], got 128',
      'ropeScaling (llama3): lowFreqFactor and highFreqFactor must be positive with highFreqFactor > lowFreqFactor, got 4 and 1',
    ]);
    expect(() =>
      makeConfig('gpt2', {
        vocabSize: 8,
        dim: 8,
        numLayers: 1,
        numHeads: 2,
        maxSeqLen: 8,
        ropeScaling: { type: 'linear', factor: 2 },
      }),
    ).toThrow(/ropeScaling needs RoPE \(the llama preset\), got gpt2/);
  });

  it('a model with YaRN scaling runs and its logits differ from plain RoPE with the same weights', async () => {
    const base = { vocabSize: 11, dim: 16, numLayers: 1, numHeads: 2, maxSeqLen: 32 };
    const plain = new TransformerLM(makeConfig('llama', base), { seed: 3 });
    const scaled = new TransformerLM(
      makeConfig('llama', { ...base, ropeScaling: { type: 'yarn', factor: 4, originalMaxSeqLen: 8 } }),
      { seed: 3 },
    );
    const ids = tensor([1, 2, 3, 4, 5, 6], [1, 6], { dtype: 'i32' });
    const a = await plain.forward(ids).data();
    const b = await scaled.forward(ids).data();
    expect(b.every(Number.isFinite)).toBe(true);
    // Row 0 attends only to itself (equal); later rows see YaRN's slower pairs and its factor on q·k.
    expect(Math.abs(a[0] - b[0])).toBeLessThan(1e-6);
    expect(Math.max(...a.map((v, i) => Math.abs(v - b[i])))).toBeGreaterThan(1e-5);
    plain.dispose();
    scaled.dispose();
  });
});
