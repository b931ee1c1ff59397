import { AutodiffBackend } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { makeConfig, TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { argmaxOf, generate, sampleFrom } from '../src/sample';

describe('sampling', () => {
  it('picks the largest score greedily, the first on ties', () => {
    expect(argmaxOf([0.1, 3, -2, 3])).toBe(1);
  });

  it('draws from softmax(logits / temperature) by inverse CDF', () => {
    const logits = [0, Math.log(3)]; // probabilities 1/4, 3/4
    expect(sampleFrom(logits, 1, 0.2)).toBe(0);
    expect(sampleFrom(logits, 1, 0.3)).toBe(1);
    expect(sampleFrom(logits, 0.01, 0.001)).toBe(1); // a low temperature is almost greedy
  });

  it('continues a prompt the same way for the same seed, cropping to the context', async () => {
    setBackend(new AutodiffBackend(new CpuBackend()));
    const config = makeConfig('gpt2', { vocabSize: 7, dim: 8, numLayers: 1, numHeads: 2, maxSeqLen: 4 });
    const model = new TransformerLM(config, { seed: 3 });
    const seen: number[] = [];
    const a = await generate(model, [1, 2], {
      maxTokens: 9,
      temperature: 1,
      seed: 5,
      onToken: (id) => seen.push(id),
    });
    expect(a).toHaveLength(9);
    expect(seen).toEqual(a);
    expect(await generate(model, [1, 2], { maxTokens: 9, temperature: 1, seed: 5 })).toEqual(a);
    const greedy = await generate(model, [1, 2], { maxTokens: 6, temperature: 0, seed: 0 });
    expect(await generate(model, [1, 2], { maxTokens: 6, temperature: 0, seed: 99 })).toEqual(greedy);
    expect(model.training).toBe(true);
    model.dispose();
  });
});
