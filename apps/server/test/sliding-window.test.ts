import { kvCacheBytes, RingKVCache } from '@loom/kvcache';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { headDim, type TransformerLM } from '@loom/nn';
import { defaultEosTokens } from '@loom/runtime';
import { scope, tensor } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedModel } from '../src/load';
import { Sequence } from '../src/sequence';
import { alone, loadStories, shared, startServer } from './helpers';

const WINDOW = 12;
let served: ServedModel;

beforeAll(async () => {
  const stories = await loadStories();
  stories.model.dispose();
  const weights = loadModelFile(shared('models/stories260K.bin'));
  const model = transformerFromTensors({ ...weights, config: { ...weights.config, slidingWindow: WINDOW } });
  served = { ...stories, model };
});

afterAll(() => served.model.dispose());

/** Greedy tokens by a full forward pass over the whole sequence at every step (the window mask, no cache). */
async function recomputedGreedy(model: TransformerLM, prompt: readonly number[], steps: number) {
  const eos = defaultEosTokens(served.tokenizer);
  const { vocabSize } = model.config;
  const tokens = [...prompt];
  for (let i = 0; i < steps; i++) {
    const best = scope(() =>
      model
        .forward(tensor(Int32Array.from(tokens), [1, tokens.length], { backend: model.backend }))
        .slice([0, tokens.length - 1, 0], [1, 1, vocabSize])
        .argmax(-1),
    );
    const token = (await best.data())[0];
    best.dispose();
    tokens.push(token);
    if (eos.includes(token)) break;
  }
  return tokens.slice(prompt.length);
}

describe('the server with a sliding-window model', () => {
  it("gives each sequence a ring cache of the window's positions", () => {
    const prompt = served.tokenizer.encode('Once upon a time', { bos: true });
    const sequence = new Sequence(
      served.tokenizer,
      { prompt, sampling: {}, stopStrings: [], maxTokens: 60, topLogprobs: undefined },
      0,
    );
    sequence.admit(served.model);
    const { numLayers, numKvHeads } = served.model.config;
    expect(sequence.cache).toBeInstanceOf(RingKVCache);
    expect(sequence.cache.bytes()).toBe(
      kvCacheBytes({
        batch: 1,
        seqLen: WINDOW,
        layers: numLayers,
        kvHeads: numKvHeads,
        headDim: headDim(served.model.config),
        bytesPerElement: 4,
      }),
    );
    sequence.release();
  });

  it('batches sequences past the wrap-around to the tokens full recomputation with the window mask gives', async () => {
    const prompts = ['Once upon a time', 'Lily and Tom', 'The little dog'];
    const maxTokens = 3 * WINDOW;
    const ids = prompts.map((p) => served.tokenizer.encode(p, { bos: true }));
    const expected = await Promise.all(ids.map((prompt) => alone(served, prompt, maxTokens)));
    for (const [i, prompt] of ids.entries()) {
      expect(expected[i].tokens.length).toBeGreaterThan(WINDOW);
      expect(expected[i].tokens).toEqual(await recomputedGreedy(served.model, prompt, maxTokens));
    }
    const { server, client } = await startServer(served, { parallel: 3, prefillChunk: 5 });
    try {
      const texts = await Promise.all(
        prompts.map(async (prompt) => {
          const done = await client.completions.create({
            model: served.id,
            prompt,
            max_tokens: maxTokens,
            temperature: 0,
          });
          return done.choices[0].text;
        }),
      );
      expect(texts).toEqual(expected.map((e) => e.text));
    } finally {
      await server.close();
    }
  });
});
