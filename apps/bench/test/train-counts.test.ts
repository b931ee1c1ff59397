import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { AdamW, makeConfig, type Preset, readClipFactor, TransformerLM } from '@loom/nn';
import { setBackend, tensor } from '@loom/tensor';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { difference } from '../src/suites/decode-counts';

const backend = await webgpuForTests();

describe.skipIf(!backend)('WebGPU training counts on a tiny model (lavapipe)', () => {
  for (const preset of ['gpt2', 'llama'] as const satisfies readonly Preset[]) {
    it(`${preset}: after 2 warm-up steps no buffer is created, and AdamW is one dispatch a parameter with no upload (its moments made on the first)`, async () => {
      if (!backend) throw new Error('unreachable');
      setBackend(new AutodiffBackend(backend));
      const config = makeConfig(preset, { vocabSize: 40, dim: 32, numLayers: 2, numHeads: 4, maxSeqLen: 16 });
      const model = new TransformerLM(config, { seed: 3 });
      const params = model.parameters();
      const optimizer = new AdamW({ beta1: 0.9, beta2: 0.99, weightDecay: 0.1 });
      for (let step = 0; step < 5; step++) {
        const ids = Int32Array.from({ length: 2 * 16 }, (_, i) => (i * 7 + step) % 40);
        const inputs = tensor(ids, [2, 16], { dtype: 'i32' });
        const targets = tensor(
          ids.map((v) => (v + 1) % 40),
          [2, 16],
          { dtype: 'i32' },
        );
        const start = backend.stats();
        const { value, grads } = valueAndGrad(() => model.loss(inputs, targets), params);
        expect(Number.isFinite(await value.item())).toBe(true);
        const clip = await readClipFactor(grads, 1);
        const beforeUpdate = backend.stats();
        optimizer.step(params, grads, 1e-3, clip);
        const update = difference(backend.stats(), beforeUpdate);
        await params[params.length - 1].data();
        const whole = difference(backend.stats(), start);
        for (const t of [inputs, targets, value, ...grads]) t.dispose();
        if (step >= 2) {
          expect(update.dispatches).toBe(params.length);
          expect(update.uploads).toBe(0);
          expect(whole.buffersCreated).toBe(0);
        }
      }
      optimizer.dispose();
      model.dispose();
    });
  }
});
