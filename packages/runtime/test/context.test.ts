import { CpuBackend } from '@loom/backend-cpu';
import { kvCacheBytes, MemoryLimitError } from '@loom/kvcache';
import { makeConfig, TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextGenerator } from '../src/index';
import { collect, tok512 } from './fixtures';

const backend = new CpuBackend();

/** A random llama for tok512 whose config claims 100 million positions; RoPE is computed, so nothing is sized by it. */
function hugeContextModel(): TransformerLM {
  setBackend(backend);
  const config = makeConfig('llama', { vocabSize: 512, dim: 32, numLayers: 2, numHeads: 4, maxSeqLen: 1e8 });
  return new TransformerLM(config).eval();
}

/** Bytes of a float32 cache of `positions` for that model. */
function cacheBytes(positions: number): number {
  return kvCacheBytes({ batch: 1, seqLen: positions, layers: 2, kvHeads: 4, headDim: 8, bytesPerElement: 4 });
}

describe('the context a generation allocates', () => {
  let model: TransformerLM;
  beforeAll(() => {
    model = hugeContextModel();
  });
  afterAll(() => model.dispose());

  it('is the prompt plus maxNewTokens, not the maxSeqLen of 100 million', async () => {
    const generator = new TextGenerator(model, tok512());
    const before = backend.liveBytes();
    const prompt = generator.encode('Once upon a time');
    const held = new Set<number>();
    const events = generator.generate(prompt, {
      sampling: { temperature: 0 },
      stop: { maxNewTokens: 20, eosTokenIds: [] },
    });
    let tokens = 0;
    for await (const event of events) {
      if (event.type === 'token') tokens++;
      held.add(backend.liveBytes() - before);
    }
    expect(tokens).toBe(20);
    expect(held).toEqual(new Set([cacheBytes(prompt.length + 20)]));
    expect(backend.liveBytes()).toBe(before);
  });

  it('is the context option when given, which must be a whole number of positions within maxSeqLen', async () => {
    const generator = new TextGenerator(model, tok512());
    const before = backend.liveBytes();
    const events = generator.generate('Once', { sampling: { temperature: 0 }, context: 1000 });
    expect(backend.liveBytes() - before).toBe(cacheBytes(1000));
    await events.return();
    for (const context of [0, 1.5, 1e8 + 1]) {
      expect(() => generator.generate('Once', { context })).toThrow(
        `generate: context must be an integer in [1, 100000000] (the model's maxSeqLen), got ${context}`,
      );
    }
    expect(() => generator.generate('Once upon a time', { context: 3 })).toThrow(
      /the prompt has 5 tokens but the context holds 3 positions/,
    );
    expect(backend.liveBytes()).toBe(before);
  });

  it('is refused over the limits with the bytes it would take, before anything is allocated', async () => {
    const generator = new TextGenerator(model, tok512(), { limits: { totalBytes: 2 ** 30 } });
    const before = backend.liveCount();
    // Without maxNewTokens the context is the maxSeqLen: 51.2 GB of cache, over the 1 GiB limit.
    const refusal = (() => {
      try {
        generator.generate('Once upon a time', { sampling: { temperature: 0 } });
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(MemoryLimitError);
    expect((refusal as MemoryLimitError).message).toContain(
      'the KV cache of 100000000 positions takes 51200000000 bytes (47.7 GiB)',
    );
    expect(() => generator.chat()).toThrow(MemoryLimitError);
    expect(() => generator.session({ capacity: 5e7 })).toThrow(/more than the limit of 1073741824 bytes/);
    expect(backend.liveCount()).toBe(before);
    const { stats } = await collect(
      generator.generate('Once upon a time', { sampling: { temperature: 0 }, stop: { maxNewTokens: 8 } }),
    );
    expect(stats.tokens.length).toBeGreaterThan(0);
    const tight = new TextGenerator(model, tok512(), { limits: { tensorBytes: 4096 } });
    expect(() => tight.generate('Once', { context: 33 })).toThrow(
      /one layer's keys of 33 positions, \[1, 33, 4, 8\] float32, take 4224 bytes/,
    );
    await tight.generate('Once', { context: 32 }).return();
    expect(backend.liveCount()).toBe(before);
  });
});
