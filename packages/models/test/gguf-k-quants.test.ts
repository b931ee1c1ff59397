import { describe, expect, it } from 'vitest';
import { memorySource } from '../src/byte-source';
import { GGML_TYPES } from '../src/gguf/ggml-types';
import { readGgufHeader } from '../src/gguf/header';
import { dequantizeQ4K, dequantizeQ6K, Q4_K_BYTES } from '../src/gguf/k-quants';
import { quantize } from '../src/gguf/quantize';
import { ggufTensorTypes, type ModelConfig, parseModel, serializeGguf } from '../src/index';
import { errorOf, randomModel, tinyLlama } from './helpers';

/** Every matrix row a multiple of 256, so every matrix takes a K-quant. */
const wide: ModelConfig = {
  ...tinyLlama,
  vocabSize: 16,
  dim: 256,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 512,
  maxSeqLen: 8,
  tiedEmbeddings: false,
};

const typeNames = (bytes: Uint8Array) =>
  Object.fromEntries(
    readGgufHeader(memorySource(bytes, 'k.gguf')).tensors.map((info) => [
      info.name,
      GGML_TYPES.get(info.type)?.name,
    ]),
  );

describe('GGUF with K-quants', () => {
  const tensors = randomModel(wide, 3);

  it('writes a mixed file (Q4_K, output in Q6_K, norms F32) that reads back as the dequantized blocks', () => {
    const bytes = serializeGguf(wide, tensors, {
      weightType: 'Q4_K',
      tensorTypes: { 'output.weight': 'Q6_K' },
    });
    const types = typeNames(bytes);
    expect(types['output.weight']).toBe('Q6_K');
    expect(types['blk.0.ffn_down.weight']).toBe('Q4_K');
    expect(types['token_embd.weight']).toBe('Q4_K');
    expect(types['blk.1.attn_norm.weight']).toBe('F32');
    const again = parseModel(bytes, undefined, 'k.gguf');
    expect(again.config).toEqual({ ...wide, normEps: Math.fround(wide.normEps) }); // GGUF stores it as f32
    for (const [i, tensor] of again.tensors.entries()) {
      const original = tensors[i];
      expect(tensor.shape, tensor.name).toEqual(original.shape);
      const expected =
        original.shape.length === 1
          ? original.data
          : tensor.name === 'output.weight'
            ? dequantizeQ6K(quantize(original.data, 'Q6_K'), original.data.length)
            : dequantizeQ4K(quantize(original.data, 'Q4_K'), original.data.length);
      expect(tensor.data, tensor.name).toEqual(expected);
    }
  });

  it('falls back to Q4_0 / Q8_0 for rows that are not whole super-blocks, and to F32 for rows not a multiple of 32', () => {
    const narrow: ModelConfig = { ...tinyLlama, dim: 64, numHeads: 2, numKvHeads: 1, hiddenDim: 40 };
    const model = randomModel(narrow, 4);
    const of = (type: 'Q4_K' | 'Q6_K') =>
      Object.fromEntries(ggufTensorTypes(model, { weightType: type }).map((t) => [t.name, t.type]));
    expect(of('Q4_K')['layers.0.attention.wq.weight']).toBe('Q4_0');
    expect(of('Q6_K')['layers.0.attention.wq.weight']).toBe('Q8_0');
    expect(of('Q4_K')['layers.0.feed_forward.w2.weight']).toBe('F32'); // rows of 40
    expect(of('Q4_K')['norm.weight']).toBe('F32');
    const bytes = serializeGguf(narrow, model, { weightType: 'Q6_K' });
    expect(typeNames(bytes)['blk.0.attn_q.weight']).toBe('Q8_0');
    expect(parseModel(bytes, undefined, 'n.gguf').tensors.length).toBe(model.length);
  });

  it('refuses per-tensor types for tensors the model does not have', () => {
    expect(
      errorOf(() => serializeGguf(wide, tensors, { tensorTypes: { 'layers.9.x.weight': 'Q6_K' } })),
    ).toMatch(/tensorTypes names layers\.9\.x\.weight, which the model does not have/);
  });

  it('refuses a truncated Q4_K tensor, and rows that are not whole super-blocks, before reading them', () => {
    const bytes = serializeGguf(wide, tensors, { weightType: 'Q4_K' });
    const header = readGgufHeader(memorySource(bytes, 'k.gguf'));
    const last = header.tensors.reduce((a, b) => (a.offset > b.offset ? a : b));
    const cut = bytes.subarray(0, last.offset + Q4_K_BYTES);
    expect(errorOf(() => parseModel(cut, undefined, 'cut.gguf'))).toMatch(
      /cut\.gguf: tensor ".*" needs \d+ bytes at byte \d+ but the file holds \d+ — the file is truncated/,
    );
    // Rewrite output.weight's first dimension 256 → 128 in its tensor info: 128 is not a whole Q4_K row.
    const name = new TextEncoder().encode('output.weight');
    const at = Buffer.from(bytes).indexOf(Buffer.from(name)) + name.length + 4; // after the name and dim count
    const bad = bytes.slice();
    new DataView(bad.buffer).setBigUint64(at, 128n, true);
    expect(errorOf(() => parseModel(bad, undefined, 'bad.gguf'))).toMatch(
      /a Q4_K row must be a multiple of 256 elements/,
    );
  });
});
