import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import type { RopeScaling } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { TextGenerator } from '../src/index';
import { collect, maxDiff, modelPath, recomputed, tok512 } from './fixtures';

/** stories260K's weights (context 512) under a RoPE scaling whose original context is 16 positions. */
function scaled(scaling: RopeScaling): TextGenerator {
  const weights = loadModelFile(modelPath);
  setBackend(new CpuBackend());
  const model = transformerFromTensors({
    config: { ...weights.config, ropeScaling: scaling },
    tensors: weights.tensors,
  });
  return new TextGenerator(model, tok512());
}

/** Per generated token: the position it was predicted at and |cached - recomputed| of its logits. */
async function cachedVsRecomputed(generator: TextGenerator, steps: number): Promise<[number, number][]> {
  const prompt = generator.encode('Once upon a time');
  const { events } = await collect(
    generator.generate(prompt, {
      sampling: { temperature: 0 },
      stop: { maxNewTokens: steps, eosTokenIds: [] },
      withLogits: true,
    }),
  );
  const tokens = [...prompt];
  const out: [number, number][] = [];
  for (const event of events) {
    if (event.type !== 'token' || !event.logits) continue;
    out.push([tokens.length - 1, maxDiff(event.logits, await recomputed(generator.model, tokens))]);
    tokens.push(event.token);
  }
  return out;
}

describe('decoding a RoPE-scaled model with a KV cache', () => {
  for (const scaling of [
    { type: 'linear', factor: 4 },
    { type: 'yarn', factor: 4, originalMaxSeqLen: 128 },
    { type: 'llama3', factor: 4, lowFreqFactor: 1, highFreqFactor: 4, originalMaxSeqLen: 16 },
  ] as const) {
    it(`${scaling.type}: every cached step equals a full recompute`, async () => {
      const generator = scaled(scaling);
      const diffs = await cachedVsRecomputed(generator, 24);
      expect(diffs).toHaveLength(24);
      expect(Math.max(...diffs.map(([, d]) => d))).toBeLessThan(1e-4);
      generator.model.dispose();
    });
  }

  it('dynamic: equal up to the original context; past it each step uses its own length, as transformers does', async () => {
    const generator = scaled({ type: 'dynamic', factor: 4, originalMaxSeqLen: 16 });
    const diffs = await cachedVsRecomputed(generator, 24);
    // Up to 16 positions both use plain RoPE; later, cached keys keep the rotation of the step that stored them.
    const within = diffs.filter(([position]) => position < 16).map(([, d]) => d);
    const past = diffs.filter(([position]) => position >= 17).map(([, d]) => d);
    expect(within.length).toBeGreaterThan(5);
    expect(Math.max(...within)).toBeLessThan(1e-4);
    expect(Math.max(...past)).toBeGreaterThan(1e-3);
    generator.model.dispose();
  });
});
