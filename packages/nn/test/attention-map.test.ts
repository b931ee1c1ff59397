import { CpuBackend } from '@loom/backend-cpu';
import { assign, keep, randn, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  attentionMap,
  headDim,
  makeConfig,
  type NormPlacement,
  type Preset,
  type TransformerConfig,
  TransformerEncoder,
  TransformerLM,
} from '../src/index';

const TOKENS = [3, 1, 4, 1, 5, 9, 2, 6, 5];
const LAYER = 1;

/**
 * Attention features beyond the preset's: Qwen2's q/k/v biases, Qwen3's q/k norms with a wider head, Mistral's
 * sliding window.
 */
type Extra = Pick<TransformerConfig, 'qkvBias' | 'qkNorm' | 'headDim' | 'slidingWindow'>;

/**
 * A two-block model whose query and key weights are scaled up, so that its attention is far from uniform; its
 * q/k/v biases and q/k norm weights (if any) are moved off their initial 0 and 1 so that leaving one out shows.
 */
function sharpModel(
  preset: Preset,
  numKvHeads: number,
  norm: NormPlacement,
  extra: Extra = {},
): TransformerLM {
  const config = makeConfig(preset, {
    vocabSize: 11,
    dim: 32,
    numLayers: 2,
    numHeads: 4,
    numKvHeads,
    maxSeqLen: 16,
    ...extra,
  });
  const model = new TransformerLM(config, { norm, seed: 7 });
  scope(() => {
    for (const [i, block] of model.layers.entries()) {
      const { wq, wk, wv, qNorm, kNorm } = block.attention;
      for (const w of [wq.weight, wk.weight]) assign(w, w.mul(6));
      const moved = [wq.bias, wk.bias, wv.bias, qNorm?.weight, kNorm?.weight];
      for (const [j, p] of moved.entries()) {
        if (p !== undefined) assign(p, p.add(randn(p.shape, { seed: 100 + 10 * i + j }).mul(0.5)));
      }
    }
  });
  return model;
}

/** The input and output of block `layer`'s attention during the model's own forward pass. */
function realAttention(
  model: TransformerLM,
  tokens: readonly number[],
  layer: number,
): { x: Tensor; out: Tensor } {
  const attention = model.layers[layer].attention;
  const original = attention.forward.bind(attention);
  let seen: { x: Tensor; out: Tensor } | undefined;
  const spy = vi.spyOn(attention, 'forward').mockImplementation((x, ctx) => {
    const out = original(x, ctx);
    seen = { x: keep(x.clone()), out: keep(out.clone()) };
    return out;
  });
  scope(() => model.forward(tensor(Int32Array.from(tokens), [1, tokens.length]))); // [1, T, vocab]
  spy.mockRestore();
  if (seen === undefined) throw new Error(`layer ${layer}'s attention did not run`);
  return seen;
}

/** probs · v for every head, through wo: what the layer outputs if `probs` [H, T, T] are its weights. */
async function outputFrom(model: TransformerLM, x: Tensor, probs: Float32Array): Promise<Float32Array> {
  const { numHeads, numKvHeads } = model.config;
  const hd = headDim(model.config);
  const t = x.shape[1];
  const attention = model.layers[LAYER].attention;
  const vt = attention.wv.forward(x); // [1, T, Hkv*hd]
  const v = await vt.float32Data();
  vt.dispose();
  const mixed = new Float32Array(t * numHeads * hd); // [T, H*hd]
  for (let h = 0; h < numHeads; h++) {
    const kv = Math.floor(h / (numHeads / numKvHeads));
    for (let i = 0; i < t; i++) {
      for (let j = 0; j < t; j++) {
        const p = probs[(h * t + i) * t + j];
        for (let d = 0; d < hd; d++)
          mixed[i * numHeads * hd + h * hd + d] += p * v[(j * numKvHeads + kv) * hd + d];
      }
    }
  }
  const out = scope(() => attention.wo.forward(tensor(mixed, [1, t, numHeads * hd]))); // [1, T, dim]
  const values = await out.float32Data();
  out.dispose();
  return values;
}

const worstDifference = (a: Float32Array, b: Float32Array) =>
  a.reduce((w, v, i) => Math.max(w, Math.abs(v - b[i])), 0);

describe('attentionMap', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  const cases = [
    { preset: 'llama', numKvHeads: 2, norm: 'pre' }, // RoPE, grouped-query
    { preset: 'llama', numKvHeads: 1, norm: 'post' }, // multi-query, post-norm
    { preset: 'gpt2', numKvHeads: 4, norm: 'pre' }, // learned positions, multi-head
    { preset: 'llama', numKvHeads: 2, norm: 'pre', extra: { qkvBias: true } }, // Qwen2
    { preset: 'llama', numKvHeads: 2, norm: 'pre', extra: { qkNorm: true, headDim: 12 } }, // Qwen3
  ] as const;
  for (const { preset, numKvHeads, norm, ...rest } of cases) {
    const extra: Extra = 'extra' in rest ? rest.extra : {};
    it(`${preset} (${numKvHeads} kv heads, ${norm}-norm${Object.keys(extra)
      .map((k) => `, ${k}`)
      .join('')}): the weights the layer used, causal, rows summing to 1`, async () => {
      const model = sharpModel(preset, numKvHeads, norm, extra);
      const t = TOKENS.length;
      const probs = await attentionMap(model, TOKENS, { layer: LAYER });
      expect(probs.length).toBe(4 * t * t);
      let farFromUniform = 0;
      for (let h = 0; h < 4; h++) {
        for (let i = 0; i < t; i++) {
          const row = probs.subarray((h * t + i) * t, (h * t + i + 1) * t);
          expect(row.slice(i + 1).every((p) => p === 0)).toBe(true);
          expect(row.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 5);
          for (let j = 0; j <= i; j++)
            farFromUniform = Math.max(farFromUniform, Math.abs(row[j] - 1 / (i + 1)));
        }
      }
      expect(farFromUniform).toBeGreaterThan(0.2);
      const real = realAttention(model, TOKENS, LAYER);
      const expected = await real.out.float32Data();
      expect(worstDifference(await outputFrom(model, real.x, probs), expected)).toBeLessThan(1e-4);
      real.x.dispose();
      real.out.dispose();
      model.dispose();
    });
  }

  it('a sliding-window model (Mistral): zero weight on keys older than the window, as the windowed layer applies', async () => {
    const window = 3;
    const model = sharpModel('llama', 2, 'pre', { slidingWindow: window });
    const t = TOKENS.length;
    const probs = await attentionMap(model, TOKENS, { layer: LAYER });
    for (let h = 0; h < 4; h++) {
      for (let i = 0; i < t; i++) {
        const row = probs.subarray((h * t + i) * t, (h * t + i + 1) * t);
        const oldest = Math.max(0, i - window + 1);
        expect(row.slice(0, oldest).every((p) => p === 0)).toBe(true);
        expect(row.slice(i + 1).every((p) => p === 0)).toBe(true);
        expect(row.slice(oldest, i + 1).every((p) => p > 0)).toBe(true);
        expect(row.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 5);
      }
    }
    const real = realAttention(model, TOKENS, LAYER);
    const expected = await real.out.float32Data();
    expect(worstDifference(await outputFrom(model, real.x, probs), expected)).toBeLessThan(1e-4);
    real.x.dispose();
    real.out.dispose();
    model.dispose();
  });

  it('gives one head as the slice of all heads', async () => {
    const model = sharpModel('llama', 2, 'pre');
    const t = TOKENS.length;
    const all = await attentionMap(model, TOKENS, { layer: 0 });
    const one = await attentionMap(model, TOKENS, { layer: 0, head: 3 });
    expect(Array.from(one)).toEqual(Array.from(all.subarray(3 * t * t, 4 * t * t)));
    model.dispose();
  });

  it("with mask 'none' every key gets weight, and the causal map is its lower triangle renormalised", async () => {
    const model = sharpModel('llama', 2, 'pre');
    const t = TOKENS.length;
    const causal = await attentionMap(model, TOKENS, { layer: LAYER });
    const open = await attentionMap(model, TOKENS, { layer: LAYER, mask: 'none' });
    for (let h = 0; h < 4; h++) {
      for (let i = 0; i < t; i++) {
        const row = open.subarray((h * t + i) * t, (h * t + i + 1) * t);
        expect(row.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 5);
        expect(row.every((p) => p > 0)).toBe(true);
        const seen = row.slice(0, i + 1).reduce((s, p) => s + p, 0);
        for (let j = 0; j <= i; j++) expect(causal[(h * t + i) * t + j]).toBeCloseTo(row[j] / seen, 5);
      }
    }
    model.dispose();
  });

  it("reads an encoder with its own (no) mask: layer 0 equals the decoder's with mask 'none' on the same weights", async () => {
    const decoder = sharpModel('llama', 2, 'pre');
    const encoder = new TransformerEncoder(decoder.config, { seed: 1 });
    const weights = await Promise.all(
      [...decoder.stateDict()].map(
        async ([name, p]) => [name, { shape: p.shape, data: await p.float32Data() }] as const,
      ),
    );
    encoder.loadStateDict(new Map(weights));
    const t = TOKENS.length;
    const fromEncoder = await attentionMap(encoder, TOKENS, { layer: 0 });
    const fromDecoder = await attentionMap(decoder, TOKENS, { layer: 0, mask: 'none' });
    expect(worstDifference(fromEncoder, fromDecoder)).toBeLessThan(1e-6);
    // Layer 1 reads what a bidirectional layer 0 wrote, so the two models part there.
    const deeper = await attentionMap(encoder, TOKENS, { layer: 1 });
    const deeperDecoder = await attentionMap(decoder, TOKENS, { layer: 1, mask: 'none' });
    expect(worstDifference(deeper, deeperDecoder)).toBeGreaterThan(1e-3);
    expect(deeper.length).toBe(4 * t * t);
    decoder.dispose();
    encoder.dispose();
  });

  it('names the bad input', async () => {
    const model = sharpModel('gpt2', 4, 'pre');
    await expect(attentionMap(model, TOKENS, { layer: 2 })).rejects.toThrow(
      'attentionMap: layer is 2; expected an integer in [0, 2) (numLayers)',
    );
    await expect(attentionMap(model, TOKENS, { layer: 0, head: 4 })).rejects.toThrow('head is 4');
    await expect(attentionMap(model, [1, 11], { layer: 0 })).rejects.toThrow('token 1 is 11');
    await expect(attentionMap(model, [], { layer: 0 })).rejects.toThrow('got 0 tokens; give 1 to 16');
    model.dispose();
  });
});
