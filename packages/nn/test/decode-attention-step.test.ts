import {
  attentionStep,
  matmul,
  randn,
  ropeInverseFrequencies,
  scope,
  setBackend,
  tensor,
  zeros,
} from '@loom/tensor';
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

  it('refuses shapes and options that do not fit, naming them', () => {
    setBackend(countingBackend('attentionStep').backend);
    const x = randn([1, 1, 16], { seed: 1 });
    const out = zeros([1, 1, 16]);
    const weights = {
      norm: randn([16], { seed: 2 }),
      wq: randn([16, 16], { seed: 3 }),
      wk: randn([8, 16], { seed: 4 }),
      wv: randn([8, 16], { seed: 5 }),
      wo: randn([16, 16], { seed: 6 }),
    };
    const store = { keys: zeros([1, 8, 2, 4]), values: zeros([1, 8, 2, 4]) };
    const options = { offset: 3, inverseFrequencies: ropeInverseFrequencies(4, 10_000) };
    expect(() => attentionStep(out, x, weights, store, options)).not.toThrow();
    expect(() => attentionStep(out, x, { ...weights, wk: zeros([8, 15]) }, store, options)).toThrow(
      'attentionStep: wk must have shape [8, 16] (dim 16 from x, Hkv 2 and hd 4 from keys, H·hd from wq, a multiple of hd), got [8, 15]',
    );
    expect(() => attentionStep(out, x, { ...weights, wq: zeros([15, 16]) }, store, options)).toThrow(
      'attentionStep: wq must have H·hd rows, a non-zero multiple of hd 4 (from keys [1, 8, 2, 4]), got [15, 16]',
    );
    expect(() => attentionStep(out, x, weights, store, { ...options, offset: 8 })).toThrow(
      'attentionStep: offset must be an integer in [0, 8) (a row of keys), got 8',
    );
    expect(() => attentionStep(out, x, weights, store, { ...options, inverseFrequencies: [1] })).toThrow(
      'attentionStep: expected 2 inverse frequencies (one per pair of a head of 4, an even size), got 1',
    );
    const two = zeros([1, 2, 16]);
    expect(() => attentionStep(two, two, weights, store, options)).toThrow(
      'attentionStep: expected x and out [B, 1, dim] (one token per row), got x [1, 2, 16], out [1, 2, 16]',
    );
    expect(() => attentionStep(out, x, weights, store, { ...options, window: 1.5 })).toThrow(
      'attentionStep: window must be an integer',
    );
  });
});
