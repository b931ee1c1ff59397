import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import type { TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceSession, perplexity } from '../src/index';
import { golden, modelPath } from './fixtures';

/** −log p(tokens[target] | tokens[begin..target)) by the cached decode path: fed one token at a time. */
async function decodeNll(model: TransformerLM, tokens: readonly number[], begin: number, target: number) {
  const session = new InferenceSession(model);
  let logits = session.feed([tokens[begin]]);
  for (let p = begin + 1; p < target; p++) {
    logits.dispose();
    logits = session.feed([tokens[p]]);
  }
  const row = Array.from(await logits.data(), Number);
  logits.dispose();
  session.dispose();
  const max = Math.max(...row);
  const logSum = Math.log(row.reduce((sum, value) => sum + Math.exp(value - max), 0)) + max;
  return logSum - row[tokens[target]];
}

/** exp(mean NLL) where target t is predicted from the tokens since start[t] (the hand-worked window starts). */
async function reference(model: TransformerLM, tokens: readonly number[], starts: Record<number, number>) {
  let total = 0;
  for (let t = 1; t < tokens.length; t++) total += await decodeNll(model, tokens, starts[t], t);
  return Math.exp(total / (tokens.length - 1));
}

describe('perplexity', () => {
  let model: TransformerLM;
  const tokens = golden.greedy[0].sequence.slice(0, 10);
  beforeAll(() => {
    setBackend(new CpuBackend());
    model = transformerFromTensors(loadModelFile(modelPath), modelPath);
  });
  afterAll(() => model.dispose());

  it('of a sequence inside one window is exp of the mean NLL that token-by-token decoding gives', async () => {
    const result = await perplexity(model, tokens);
    expect(result).toMatchObject({ scored: 9, windows: 1 });
    const starts = Object.fromEntries(Array.from({ length: 10 }, (_, t) => [t, 0]));
    expect(result.perplexity).toBeCloseTo(await reference(model, tokens, starts), 4);
    expect(result.perplexity).toBeGreaterThan(1);
  });

  it('slides windows of 4 by 2: each token scored once, from the window that first reaches it', async () => {
    const result = await perplexity(model, tokens, { context: 4, stride: 2 });
    expect(result).toMatchObject({ scored: 9, windows: 4, context: 4, stride: 2 });
    // windows [0,4) [2,6) [4,8) [6,10) score 1-3, 4-5, 6-7, 8-9
    const starts = { 1: 0, 2: 0, 3: 0, 4: 2, 5: 2, 6: 4, 7: 4, 8: 6, 9: 6 };
    expect(result.perplexity).toBeCloseTo(await reference(model, tokens, starts), 4);
  });

  it('with stride = context overlaps windows by the one token that predicts the next', async () => {
    const result = await perplexity(model, tokens, { context: 4, stride: 4 });
    expect(result).toMatchObject({ scored: 9, windows: 3 });
    const starts = { 1: 0, 2: 0, 3: 0, 4: 3, 5: 3, 6: 3, 7: 6, 8: 6, 9: 6 };
    expect(result.perplexity).toBeCloseTo(await reference(model, tokens, starts), 4);
  });

  it('refuses a context, stride or sequence it cannot score, naming what was expected', async () => {
    await expect(perplexity(model, tokens, { context: 1 })).rejects.toThrow(
      /context must be an integer in \[2, 512\]/,
    );
    await expect(perplexity(model, tokens, { context: 4, stride: 5 })).rejects.toThrow(
      /stride must be an integer in \[1, 4\]/,
    );
    await expect(perplexity(model, [1])).rejects.toThrow(/at least 2 tokens/);
    await expect(perplexity(model, [1, 999])).rejects.toThrow(/token 1 is 999/);
  });
});
