import { describe, expect, it } from 'vitest';
import { expectedTensors, type StoredTensor, validateTensors } from '../src/index';
import { errorOf, randomModel, tinyGpt2, tinyLlama } from './helpers';

describe('expectedTensors', () => {
  it('lists the llama parameters with [out, in] shapes', () => {
    const specs = expectedTensors({ ...tinyLlama, tiedEmbeddings: false });
    expect(specs.length).toBe(1 + 2 * 9 + 1 + 1);
    expect(specs.slice(0, 11)).toEqual([
      { name: 'tok_embeddings.weight', shape: [11, 8] },
      { name: 'layers.0.attention_norm.weight', shape: [8] },
      { name: 'layers.0.attention.wq.weight', shape: [8, 8] },
      { name: 'layers.0.attention.wk.weight', shape: [4, 8] },
      { name: 'layers.0.attention.wv.weight', shape: [4, 8] },
      { name: 'layers.0.attention.wo.weight', shape: [8, 8] },
      { name: 'layers.0.ffn_norm.weight', shape: [8] },
      { name: 'layers.0.feed_forward.w1.weight', shape: [12, 8] },
      { name: 'layers.0.feed_forward.w2.weight', shape: [8, 12] },
      { name: 'layers.0.feed_forward.w3.weight', shape: [12, 8] },
      { name: 'layers.1.attention_norm.weight', shape: [8] },
    ]);
    expect(specs.at(-1)).toEqual({ name: 'output.weight', shape: [11, 8] });
    expect(expectedTensors(tinyLlama).some((spec) => spec.name === 'output.weight')).toBe(false);
  });

  it('lists the gpt2 parameters with biases and learned positions', () => {
    const names = expectedTensors(tinyGpt2).map((spec) => spec.name);
    expect(names.length).toBe(2 + 2 * 16 + 2);
    expect(names.slice(0, 6)).toEqual([
      'tok_embeddings.weight',
      'pos_embeddings.weight',
      'layers.0.attention_norm.weight',
      'layers.0.attention_norm.bias',
      'layers.0.attention.wq.weight',
      'layers.0.attention.wq.bias',
    ]);
    expect(names).not.toContain('layers.0.feed_forward.w3.weight');
    expect(names.slice(-2)).toEqual(['norm.weight', 'norm.bias']);
  });
});

describe('validateTensors', () => {
  const tensors = randomModel(tinyLlama);

  it('returns the tensors in canonical order', () => {
    expect(validateTensors(tinyLlama, [...tensors].reverse(), 'm')).toEqual(tensors);
  });

  it('reports every problem at once, naming the file', () => {
    const broken: StoredTensor[] = tensors.filter((t) => !t.name.startsWith('layers.1.feed_forward'));
    broken.push({ name: 'output.weight', shape: [11, 8], data: new Float32Array(88) });
    broken.push({ ...tensors[1] });
    broken[0] = { name: 'tok_embeddings.weight', shape: [11, 8], data: new Int32Array(88) };
    broken[2] = { ...broken[2], shape: [8, 4] };
    expect(errorOf(() => validateTensors(tinyLlama, broken, 'ckpt/model.safetensors'))).toBe(
      'ckpt/model.safetensors: the tensors do not match the model of its config (llama dim=8 hidden=12 layers=2 heads=2 kvHeads=1 vocab=11 seqLen=6 tied) — ' +
        'missing (3): layers.1.feed_forward.w1.weight [12, 8], layers.1.feed_forward.w2.weight [8, 12], layers.1.feed_forward.w3.weight [12, 8]; ' +
        'unexpected (1): output.weight [11, 8]; ' +
        'wrong shape (1): layers.0.attention.wq.weight expected [8, 8], found [8, 4]; ' +
        'integer (I32) instead of float (1): tok_embeddings.weight; ' +
        'given twice (1): layers.0.attention_norm.weight. Check that the weights and the config belong together.',
    );
  });

  it('shortens long lists and refuses inconsistent data and configs', () => {
    const message = errorOf(() => validateTensors(tinyLlama, [], 'empty.safetensors'));
    expect(message).toMatch(/missing \(20\): tok_embeddings\.weight \[11, 8\], .*, \.\.\. and 8 more\./);
    const short = tensors.map((t) => (t.name === 'norm.weight' ? { ...t, data: new Float32Array(3) } : t));
    expect(errorOf(() => validateTensors(tinyLlama, short, 'm'))).toMatch(
      /wrong shape \(1\): norm\.weight \[8\] has 3 values/,
    );
    expect(errorOf(() => validateTensors({ ...tinyLlama, numHeads: 3 }, tensors, 'm'))).toBe(
      'm: invalid model config: dim=8 must be a multiple of numHeads=3, or headDim must be given',
    );
  });
});
