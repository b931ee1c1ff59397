import { matmul, scope, setBackend, tensor, zeros } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { SwiGLUFeedForward, TransformerLM } from '../src/index';
import { countingBackend, DECODE_CONFIG } from './counting-backend';
import { TestCache } from './test-cache';

/** The logits of `tokens` fed one at a time through a cache, and how many swigluBlock calls they took. */
async function decode(model: TransformerLM, tokens: readonly number[], calls: () => number) {
  const cache = new TestCache(model.config);
  const before = calls();
  const rows: number[][] = [];
  for (const [offset, token] of tokens.entries()) {
    const logits = scope(() => model.forward(tensor(Int32Array.of(token), [1, 1]), { offset, cache }));
    rows.push(Array.from(await logits.data()));
    logits.dispose();
  }
  cache.dispose();
  return { rows, fusedCalls: calls() - before };
}

describe('a decode step runs the feed-forward and its residual as one fused op', () => {
  const tokens = [3, 1, 4, 1, 5];

  it('once per layer per step, with the logits of a full forward pass', async () => {
    const { backend, calls } = countingBackend('swigluBlock');
    setBackend(backend);
    const model = new TransformerLM(DECODE_CONFIG).eval();
    const { rows, fusedCalls } = await decode(model, tokens, calls);
    expect(fusedCalls).toBe(tokens.length * DECODE_CONFIG.numLayers);
    // The full pass (no cache) takes the separate ops.
    const before = calls();
    const full = model.forward(tensor(Int32Array.from(tokens), [1, tokens.length]));
    expect(calls()).toBe(before);
    const want = await full.data();
    rows.forEach((row, t) => {
      row.forEach((value, j) => {
        expect(Math.abs(value - want[t * DECODE_CONFIG.vocabSize + j])).toBeLessThan(1e-5);
      });
    });
    full.dispose();
    model.dispose();
  });

  it('not while dropout is active, nor with an adapter on a feed-forward linear', async () => {
    const { backend, calls } = countingBackend('swigluBlock');
    setBackend(backend);
    const dropout = new TransformerLM(DECODE_CONFIG, { dropout: 0.1 });
    expect((await decode(dropout, tokens, calls)).fusedCalls).toBe(0);
    dropout.eval();
    expect((await decode(dropout, tokens, calls)).fusedCalls).toBe(tokens.length * DECODE_CONFIG.numLayers);
    const adapted = new TransformerLM(DECODE_CONFIG).eval();
    const ffn = adapted.layers[1].feedForward;
    if (!(ffn instanceof SwiGLUFeedForward)) throw new Error('a llama block has a SwiGLU feed-forward');
    ffn.w3.adapter = { delta: (x) => matmul(x, zeros([16, 24])) }; // [1, 1, 24] of zeros

    expect((await decode(adapted, tokens, calls)).fusedCalls).toBe(
      tokens.length * (DECODE_CONFIG.numLayers - 1),
    );
    dropout.dispose();
    adapted.dispose();
  });
});
