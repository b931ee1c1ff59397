import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { assign, scope, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  configProblems,
  headDim,
  makeConfig,
  parameterCount,
  type TransformerConfig,
  TransformerLM,
} from '../src/index';
import { TestCache } from './test-cache';

/** Qwen2: q/k/v biases (o without); Qwen3: per-head q/k RMSNorm and a head wider than dim / numHeads. */
const QWEN2 = { qkvBias: true } as const;
const QWEN3 = { qkNorm: true, headDim: 6 } as const;

function tinyConfig(extra: Partial<TransformerConfig>): TransformerConfig {
  return makeConfig('llama', {
    vocabSize: 7,
    dim: 8,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    hiddenDim: 12,
    maxSeqLen: 8,
    ropeTheta: 1e6,
    ...extra,
  });
}

/** Seeded uniform values in (-scale, scale) (mulberry32), for parameters far from their initial values. */
function spread(count: number, seed: number, scale: number): Float64Array {
  let state = (seed * 0x9e3779b9 + 0x6d2b79f5) >>> 0;
  return Float64Array.from({ length: count }, () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return scale * (2 * (((t ^ (t >>> 14)) >>> 0) / 2 ** 32) - 1);
  });
}

/** Every parameter set to spread values (norm weights around 1), so each one's gradient is generic. */
function randomise(model: TransformerLM): void {
  scope(() => {
    model.namedParameters().forEach(([name, p], salt) => {
      const values = spread(p.size, salt, 0.6);
      if (/norm\.weight$/.test(name)) for (let i = 0; i < values.length; i++) values[i] += 1;
      assign(p, tensor(values, p.shape));
    });
  });
}

describe('Qwen-style attention', () => {
  it('has q/k/v biases (Qwen2) or q/k norms of headDim (Qwen3) under checkpoint names, counted exactly', () => {
    setBackend(new CpuBackend());
    for (const extra of [QWEN2, QWEN3, { ...QWEN3, qkvBias: true }]) {
      const config = tinyConfig(extra);
      const model = new TransformerLM(config);
      const shapes = new Map(model.namedParameters().map(([n, p]) => [n, p.shape]));
      const hd = headDim(config);
      const biased = config.qkvBias === true;
      expect(shapes.get('layers.1.attention.wq.bias')).toEqual(biased ? [2 * hd] : undefined);
      expect(shapes.get('layers.1.attention.wk.bias')).toEqual(biased ? [hd] : undefined);
      expect(shapes.get('layers.1.attention.wv.bias')).toEqual(biased ? [hd] : undefined);
      expect(shapes.has('layers.1.attention.wo.bias')).toBe(false);
      expect(shapes.get('layers.0.attention.q_norm.weight')).toEqual(config.qkNorm ? [hd] : undefined);
      expect(shapes.get('layers.0.attention.k_norm.weight')).toEqual(config.qkNorm ? [hd] : undefined);
      expect(shapes.get('layers.0.attention.wq.weight')).toEqual([2 * hd, 8]);
      expect(shapes.get('layers.0.attention.wo.weight')).toEqual([8, 2 * hd]);
      expect(parameterCount(config)).toBe(model.parameters().reduce((n, p) => n + p.size, 0));
      model.dispose();
    }
  });

  it('refuses bad values of the new keys, naming each', () => {
    const base = tinyConfig({});
    expect(configProblems({ ...base, headDim: 0 })).toEqual(['headDim must be a positive integer, got 0']);
    expect(configProblems({ ...base, headDim: 5 })).toEqual([
      'RoPE rotates pairs, so headDim must be even, got 5',
    ]);
    expect(configProblems({ ...base, dim: 9, headDim: 4 })).toEqual([]);
    expect(configProblems({ ...base, dim: 9 })).toEqual([
      'dim=9 must be a multiple of numHeads=2, or headDim must be given',
    ]);
    const odd = { ...base, qkNorm: 'yes' } as unknown as TransformerConfig;
    expect(configProblems(odd)).toEqual(['qkNorm must be true or false when given, got yes']);
    const gpt2 = makeConfig('gpt2', { vocabSize: 7, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 4 });
    expect(configProblems({ ...gpt2, qkNorm: true })).toEqual([
      'qkNorm (per-head RMSNorm of queries and keys) needs the llama preset, got gpt2',
    ]);
    expect(configProblems({ ...base, numHeads: 2 ** 10, numKvHeads: 1, headDim: 2 ** 10 })).toEqual([
      "numHeads * headDim = 1048576 is over Loom's limit of 524288 for a projection's width",
    ]);
  });

  for (const [name, extra] of [
    ['qwen2', QWEN2],
    ['qwen3', QWEN3],
  ] as const) {
    it(`${name}: decoding with a KV cache, a token at a time, gives the logits of full recomputation`, async () => {
      setBackend(new CpuBackend());
      const config = tinyConfig(extra);
      const model = new TransformerLM(config, { seed: 3 }).eval();
      randomise(model);
      const ids = [1, 5, 2, 6, 0, 3, 4];
      const full = scope(() => model.forward(tensor(Int32Array.from(ids), [1, ids.length])));
      const expected = await full.float32Data(); // [1, T, vocab]
      full.dispose();
      const cache = new TestCache(config);
      let worst = 0;
      for (const [position, id] of ids.entries()) {
        const step = scope(() =>
          model.forward(tensor(Int32Array.from([id]), [1, 1]), { offset: position, cache }),
        );
        const row = await step.float32Data(); // [1, 1, vocab]
        step.dispose();
        for (let v = 0; v < config.vocabSize; v++) {
          worst = Math.max(worst, Math.abs(row[v] - expected[position * config.vocabSize + v]));
        }
      }
      expect(worst).toBeLessThan(1e-5);
      cache.dispose();
      model.dispose();
    });
  }
});

/**
 * Finite differences in float64: every parameter of both blocks' attention (the new biases and q/k norms
 * included) and of the norms gets the gradient of central differences of the loss, within 1e-7.
 */
describe('Qwen-style attention gradients (float64 finite differences)', () => {
  const backend = new AutodiffBackend(new CpuBackend({ precision: 'f64' }));
  beforeAll(() => setBackend(backend));

  for (const [name, extra] of [
    ['qwen2', QWEN2],
    ['qwen3', QWEN3],
  ] as const) {
    it(`${name}: biases, q/k norms and projections get the gradients of finite differences`, async () => {
      const config = tinyConfig(extra);
      const model = new TransformerLM(config, { seed: 11 });
      randomise(model);
      const tokens = tensor(Int32Array.from([3, 1, 4, 1, 5, 2]), [1, 6], { dtype: 'i32' });
      const targets = tensor(Int32Array.from([1, 4, 1, 5, 2, 6]), [1, 6], { dtype: 'i32' });
      const checked = model.namedParameters().filter(([n]) => /attention\.|norm\.weight$/.test(n));
      expect(checked.map(([n]) => n)).toEqual(
        expect.arrayContaining(
          config.qkNorm
            ? ['layers.0.attention.q_norm.weight', 'layers.1.attention.k_norm.weight']
            : ['layers.0.attention.wq.bias', 'layers.1.attention.wv.bias'],
        ),
      );
      const params = checked.map(([, p]) => p);
      const { value, grads } = valueAndGrad(() => model.loss(tokens, targets), params);
      value.dispose();
      const analytic = await Promise.all(grads.map((g) => g.data()));
      for (const g of grads) g.dispose();
      const loss = async (): Promise<number> => {
        const out = scope(() => model.loss(tokens, targets));
        return out.item().finally(() => out.dispose());
      };
      const eps = 1e-6;
      let worst = 0;
      let where = '';
      let largest = 0;
      for (const [k, [paramName, p]] of checked.entries()) {
        const base = Float64Array.from(await p.data());
        for (let j = 0; j < base.length; j++) {
          const at = async (delta: number) => {
            const values = base.slice();
            values[j] += delta;
            scope(() => assign(p, tensor(values, p.shape)));
            return loss();
          };
          const numeric = ((await at(eps)) - (await at(-eps))) / (2 * eps);
          const excess = Math.abs(analytic[k][j] - numeric) - 1e-7 * (1 + Math.abs(numeric));
          largest = Math.max(largest, Math.abs(numeric));
          if (excess > worst || where === '') {
            worst = Math.max(worst, excess);
            where = `${paramName}[${j}]: autograd ${analytic[k][j]}, finite difference ${numeric}`;
          }
        }
        scope(() => assign(p, tensor(base, p.shape)));
      }
      expect(worst, where).toBeLessThanOrEqual(0);
      expect(largest, 'the loss depends on these parameters').toBeGreaterThan(1e-3);
      for (const t of [tokens, targets]) t.dispose();
      model.dispose();
    });
  }
});
