import { matmul, scope, setBackend, tensor, zeros } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { makeConfig, type TransformerConfig, TransformerLM } from '../src/index';
import { countingBackend, DECODE_CONFIG } from './counting-backend';
import { TestCache } from './test-cache';

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
    ['grouped-query heads', DECODE_CONFIG, [[3, 1, 4, 1, 5, 9]], 0],
    [
      'two sequences at once',
      DECODE_CONFIG,
      [
        [3, 1, 4, 1, 5],
        [2, 7, 1, 8, 2],
      ],
      0,
    ],
    ['a sliding window', { ...DECODE_CONFIG, numKvHeads: 4, slidingWindow: 3 }, [[3, 1, 4, 1, 5, 9, 2]], 0],
    ['a prefix LM after its prefix', DECODE_CONFIG, [[3, 1, 4, 1, 5, 9]], 3],
    ['scaled RoPE', { ...DECODE_CONFIG, ropeScaling: { type: 'linear', factor: 2 } }, [[3, 1, 4, 1, 5]], 0],
  ];
  for (const [name, config, rows, prefix] of cases) {
    it(`${name}: once per layer per step, with the very logits of the separate ops`, async () => {
      const { backend, calls } = countingBackend('attentionStep');
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
    const { backend, calls } = countingBackend('attentionStep');
    setBackend(backend);
    const tokens = [[3, 1, 4]];
    const steps = tokens[0].length * DECODE_CONFIG.numLayers;
    const dropout = new TransformerLM(DECODE_CONFIG, { dropout: 0.1 });
    expect((await decode(dropout, tokens, true, calls)).fusedCalls).toBe(0);
    dropout.eval();
    expect((await decode(dropout, tokens, true, calls)).fusedCalls).toBe(steps);
    const adapted = new TransformerLM(DECODE_CONFIG).eval();
    adapted.layers[1].attention.wv.adapter = { delta: (x) => matmul(x, zeros([16, 8])) }; // [B, 1, 8] of zeros
    expect((await decode(adapted, tokens, true, calls)).fusedCalls).toBe(steps - tokens[0].length);
    for (const config of [
      { ...DECODE_CONFIG, qkvBias: true },
      { ...DECODE_CONFIG, qkNorm: true },
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
