import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  clipGradNorm,
  makeConfig,
  memoryEstimate,
  parameterCount,
  TransformerLM,
  warmupCosine,
} from '../src/index';

describe('TransformerLM', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('names parameters as checkpoints do and counts them exactly', () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      const config = makeConfig(preset, {
        vocabSize: 11,
        dim: 16,
        numLayers: 2,
        numHeads: 4,
        numKvHeads: 2,
        maxSeqLen: 8,
      });
      const model = new TransformerLM(config);
      const names = model.namedParameters().map(([n]) => n);
      expect(names).toContain('layers.0.attention.wq.weight');
      expect(names).toContain('layers.1.feed_forward.w2.weight');
      expect(names).toContain(
        preset === 'llama' ? 'layers.1.feed_forward.w3.weight' : 'pos_embeddings.weight',
      );
      expect(names.includes('output.weight')).toBe(preset === 'llama');
      const total = model.parameters().reduce((n, p) => n + p.size, 0);
      expect(parameterCount(config)).toBe(total);
      expect(model.weightCount()).toBe(total);
      model.dispose();
    }
  });

  it("with init 'zeros' starts every matrix and embedding at zero (for loading) and norms at one", async () => {
    for (const preset of ['llama', 'gpt2'] as const) {
      const config = makeConfig(preset, { vocabSize: 11, dim: 16, numLayers: 2, numHeads: 2, maxSeqLen: 8 });
      const empty = new TransformerLM(config, { init: 'zeros' });
      const random = new TransformerLM(config);
      const randomParams = random.stateDict();
      for (const [name, p] of empty.namedParameters()) {
        const values = await p.float32Data();
        const drawn = await randomParams.get(name)!.float32Data();
        const isNorm = /norm/.test(name) && !name.endsWith('bias');
        // Norm weights start at one and biases at zero either way; the drawn weights are zero only here.
        expect(
          values.every((v) => v === (isNorm ? 1 : 0)),
          name,
        ).toBe(true);
        if (!isNorm && !name.endsWith('bias'))
          expect(
            drawn.some((v) => v !== 0),
            name,
          ).toBe(true);
      }
      empty.dispose();
      random.dispose();
    }
  });

  it('estimates training memory by part', () => {
    const config = makeConfig('gpt2', { vocabSize: 65, dim: 128, numLayers: 4, numHeads: 4, maxSeqLen: 64 });
    const m = memoryEstimate(config, 12, 64);
    expect(m.weights).toBe(parameterCount(config) * 4);
    expect(m.optimizer).toBe(2 * m.weights);
    expect(m.total).toBe(m.weights + m.gradients + m.optimizer + m.activations);
    expect(m.activations).toBeGreaterThan(0);
  });

  for (const preset of ['llama', 'gpt2'] as const) {
    it(`${preset}: AdamW learns a repeating sequence`, async () => {
      const config = makeConfig(preset, {
        vocabSize: 7,
        dim: 32,
        numLayers: 2,
        numHeads: 4,
        numKvHeads: 2,
        maxSeqLen: 16,
      });
      const model = new TransformerLM(config, { seed: 5 });
      const seq = Array.from({ length: 17 }, (_, i) => i % 7);
      const tokens = tensor(seq.slice(0, 16), [1, 16], { dtype: 'i32' });
      const targets = tensor(seq.slice(1), [1, 16], { dtype: 'i32' });
      const params = model.parameters();
      const opt = new AdamW({ weightDecay: 0.1 });
      const lr = warmupCosine({ maxLr: 1e-2, minLr: 1e-3, warmup: 5, decaySteps: 60 });
      const losses: number[] = [];
      const live: number[] = [];
      for (let step = 0; step < 60; step++) {
        const { value, grads } = valueAndGrad(() => model.loss(tokens, targets), params);
        losses.push(await value.item());
        const clipped = clipGradNorm(grads, 1);
        opt.step(params, clipped.grads, lr(step));
        for (const t of [value, clipped.norm, ...grads, ...clipped.grads]) t.dispose();
        live.push(model.backend.liveCount());
      }
      expect(new Set(live.slice(1)).size, 'live tensors stay constant across steps').toBe(1);
      expect(losses[0]).toBeGreaterThan(1.5);
      expect(losses[losses.length - 1]).toBeLessThan(0.2);
      opt.dispose();
      model.dispose();
    });
  }
});
