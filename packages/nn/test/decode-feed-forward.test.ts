import { CpuBackend } from '@loom/backend-cpu';
import { type FusedKernels, matmul, scope, setBackend, tensor, zeros } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { makeConfig, SwiGLUFeedForward, TransformerLM } from '../src/index';
import { TestCache } from './test-cache';

const CONFIG = makeConfig('llama', {
  vocabSize: 11,
  dim: 16,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 24,
  maxSeqLen: 8,
});

/** A CPU backend whose swigluBlock kernel counts its calls. */
function countingBackend(): { backend: CpuBackend; calls: () => number } {
  const backend = new CpuBackend();
  const kernel = backend.fused.swigluBlock;
  if (!kernel) throw new Error('the CPU backend has no swigluBlock kernel');
  let count = 0;
  const fused: Partial<FusedKernels> = {
    ...backend.fused,
    swigluBlock: (...args) => {
      count++;
      return kernel(...args);
    },
  };
  Object.defineProperty(backend, 'fused', { value: fused });
  return { backend, calls: () => count };
}

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
    const { backend, calls } = countingBackend();
    setBackend(backend);
    const model = new TransformerLM(CONFIG).eval();
    const { rows, fusedCalls } = await decode(model, tokens, calls);
    expect(fusedCalls).toBe(tokens.length * CONFIG.numLayers);
    // The full pass (no cache) takes the separate ops.
    const before = calls();
    const full = model.forward(tensor(Int32Array.from(tokens), [1, tokens.length]));
    expect(calls()).toBe(before);
    const want = await full.data();
    rows.forEach((row, t) => {
      row.forEach((value, j) => {
        expect(Math.abs(value - want[t * CONFIG.vocabSize + j])).toBeLessThan(1e-5);
      });
    });
    full.dispose();
    model.dispose();
  });

  it('not while dropout is active, nor with an adapter on a feed-forward linear', async () => {
    const { backend, calls } = countingBackend();
    setBackend(backend);
    const dropout = new TransformerLM(CONFIG, { dropout: 0.1 });
    expect((await decode(dropout, tokens, calls)).fusedCalls).toBe(0);
    dropout.eval();
    expect((await decode(dropout, tokens, calls)).fusedCalls).toBe(tokens.length * CONFIG.numLayers);
    const adapted = new TransformerLM(CONFIG).eval();
    const ffn = adapted.layers[1].feedForward;
    if (!(ffn instanceof SwiGLUFeedForward)) throw new Error('a llama block has a SwiGLU feed-forward');
    ffn.w3.adapter = { delta: (x) => matmul(x, zeros([16, 24])) }; // [1, 1, 24] of zeros

    expect((await decode(adapted, tokens, calls)).fusedCalls).toBe(tokens.length * (CONFIG.numLayers - 1));
    dropout.dispose();
    adapted.dispose();
  });
});
