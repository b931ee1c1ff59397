import { CpuBackend } from '@loom/backend-cpu';
import { type FusedKernels, matmul, scope, setBackend, tensor, zeros } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { makeConfig, type TransformerConfig, TransformerLM } from '../src/index';
import { TestCache } from './test-cache';

const LLAMA = makeConfig('llama', {
  vocabSize: 11,
  dim: 16,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 24,
  maxSeqLen: 8,
});

/** A CPU backend whose attentionStep kernel counts its calls. */
function countingBackend(): { backend: CpuBackend; calls: () => number } {
  const backend = new CpuBackend();
  const kernel = backend.fused.attentionStep;
  if (!kernel) throw new Error('the CPU backend has no attentionStep kernel');
  let count = 0;
  const fused: Partial<FusedKernels> = {
    ...backend.fused,
    attentionStep: (...args) => {
      count++;
      kernel(...args);
    },
  };
  Object.defineProperty(backend, 'fused', { value: fused });
  return { backend, calls: () => count };
}

/**
 * The logits of rows of tokens ([B, steps]) fed through a cache that hands out its storage (so the fused step may
 * run) or not, and how many attentionStep calls they took: one step at a time, after the first `prefix` positions in
 * one call as a prefix LM's bidirectional prefix when given.
 */
async function decode(
  model: TransformerLM,
  rows: readonly (readonly number[])[],
  reserve: boolean,
  calls: () => number,
  prefix = 0,
) {
  const cache = new TestCache(model.config, rows.length, { reserve });
  const before = calls();
  const logits: number[][] = [];
  const prefixLength = prefix > 0 ? prefix : undefined;
  for (let offset = 0; offset < rows[0].length; offset = Math.max(offset + 1, prefix)) {
    const end = Math.max(offset + 1, prefix);
    const ids = tensor(Int32Array.from(rows.flatMap((row) => row.slice(offset, end))), [
      rows.length,
      end - offset,
    ]);
    const out = scope(() => model.forward(ids, { offset, cache, prefixLength }));
    logits.push(Array.from(await out.data()));
    out.dispose();
    ids.dispose();
  }
  cache.dispose();
  return { logits, fusedCalls: calls() - before };
}

describe('a decode step runs the attention half of a llama block as one fused op', () => {
  const cases: [string, TransformerConfig, number[][], number][] = [
    ['grouped-query heads', LLAMA, [[3, 1, 4, 1, 5, 9]], 0],
    [
      'two sequences at once',
      LLAMA,
      [
        [3, 1, 4, 1, 5],
        [2, 7, 1, 8, 2],
      ],
      0,
    ],
    ['a sliding window', { ...LLAMA, numKvHeads: 4, slidingWindow: 3 }, [[3, 1, 4, 1, 5, 9, 2]], 0],
    ['a prefix LM after its prefix', LLAMA, [[3, 1, 4, 1, 5, 9]], 3],
    ['scaled RoPE', { ...LLAMA, ropeScaling: { type: 'linear', factor: 2 } }, [[3, 1, 4, 1, 5]], 0],
  ];
  for (const [name, config, rows, prefix] of cases) {
    it(`${name}: once per layer per step, with the very logits of the separate ops`, async () => {
      const { backend, calls } = countingBackend();
      setBackend(backend);
      const model = new TransformerLM(config).eval();
      const fused = await decode(model, rows, true, calls, prefix);
      const separate = await decode(model, rows, false, calls, prefix);
      expect(fused.fusedCalls).toBe((rows[0].length - prefix) * config.numLayers);
      expect(separate.fusedCalls).toBe(0);
      // The same kernels in the same order: the same bits.
      expect(fused.logits).toEqual(separate.logits);
      model.dispose();
    });
  }

  it('not while dropout is active, nor with an adapter, a bias or q/k norms, nor for learned positions', async () => {
    const { backend, calls } = countingBackend();
    setBackend(backend);
    const tokens = [[3, 1, 4]];
    const steps = tokens[0].length * LLAMA.numLayers;
    const dropout = new TransformerLM(LLAMA, { dropout: 0.1 });
    expect((await decode(dropout, tokens, true, calls)).fusedCalls).toBe(0);
    dropout.eval();
    expect((await decode(dropout, tokens, true, calls)).fusedCalls).toBe(steps);
    const adapted = new TransformerLM(LLAMA).eval();
    adapted.layers[1].attention.wv.adapter = { delta: (x) => matmul(x, zeros([16, 8])) }; // [B, 1, 8] of zeros
    expect((await decode(adapted, tokens, true, calls)).fusedCalls).toBe(steps - tokens[0].length);
    for (const config of [
      { ...LLAMA, qkvBias: true },
      { ...LLAMA, qkNorm: true },
      makeConfig('gpt2', { vocabSize: 11, dim: 16, numLayers: 2, numHeads: 4, maxSeqLen: 8 }),
    ]) {
      const model = new TransformerLM(config).eval();
      expect((await decode(model, tokens, true, calls)).fusedCalls).toBe(0);
      model.dispose();
    }
    dropout.dispose();
    adapted.dispose();
  });
});
