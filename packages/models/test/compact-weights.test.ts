import { describe, expect, it } from 'vitest';
import { checkFiniteKept } from '../src/finite';
import { type ModelConfig, parseModel, serializeGguf, validateTensors } from '../src/index';
import { errorOf, randomModel, tinyLlama } from './helpers';

/** Rows of 32 and 64: whole Q8_0 blocks. */
const wide: ModelConfig = { ...tinyLlama, dim: 32, hiddenDim: 64 };

describe('weights kept only as blocks or halves', () => {
  it('are checked for NaN and infinities at load, naming the tensor, though never widened', () => {
    const tensors = randomModel(wide, 3);
    const w2 = tensors.find((t) => t.name === 'layers.1.feed_forward.w2.weight');
    if (!w2) throw new Error('test model has no layers.1.feed_forward.w2.weight');
    w2.data[70] = Number.POSITIVE_INFINITY; // row 1, block 0: its scale max|w| / 127 is infinite
    const q8 = serializeGguf(wide, tensors, { weightType: 'Q8_0' });
    expect(errorOf(() => parseModel(q8, undefined, 'inf.gguf', { weights: 'quantized' }))).toMatch(
      /^inf\.gguf: tensor "layers\.1\.feed_forward\.w2\.weight" holds a non-finite scale Infinity at index 2 of 64 — the weights are corrupt/,
    );
    // Widened, the same block's values are refused as before.
    expect(errorOf(() => parseModel(q8, undefined, 'inf.gguf'))).toMatch(
      /inf\.gguf: tensor "layers\.1\.feed_forward\.w2\.weight" holds \d+ non-finite value\(s\)/,
    );
    w2.data[70] = Number.NaN;
    const f16 = serializeGguf(wide, tensors, { weightType: 'F16' });
    expect(errorOf(() => parseModel(f16, undefined, 'nan.gguf', { weights: 'quantized' }))).toMatch(
      /^nan\.gguf: tensor "layers\.1\.feed_forward\.w2\.weight" holds a non-finite f16 value 0x7e00 at index 70 of 2048/,
    );
    w2.data[70] = 0.5;
    const fine = serializeGguf(wide, tensors, { weightType: 'F16' });
    const loaded = parseModel(fine, undefined, 'fine.gguf', { weights: 'quantized' });
    expect(loaded.halves?.length).toBe(2 * 7 + 1); // the tied embedding too
    expect(loaded.tensors.some((t) => t.name === 'layers.1.feed_forward.w2.weight')).toBe(false);
  });

  it('finds a non-finite value in either half of a word, for both 16-bit types', () => {
    const half = (type: 'f16' | 'bf16', bits: number, at: number) => {
      const packed = new Int32Array(3);
      packed[at >> 1] = bits << (16 * (at & 1));
      return { name: 'output.weight', type, shape: [2, 3] as [number, number], packed };
    };
    const check = (h: ReturnType<typeof half>) => () => checkFiniteKept({ halves: [h] }, 'm');
    expect(check(half('bf16', 0xff80, 5))).toThrow(/bf16 value 0xff80 at index 5 of 6/); // -Infinity
    expect(check(half('bf16', 0x7f7f, 5))).not.toThrow(); // the largest finite bf16
    expect(check(half('f16', 0x7c01, 0))).toThrow(/f16 value 0x7c01 at index 0 of 6/); // a NaN
    expect(check(half('f16', 0x7bff, 0))).not.toThrow(); // 65504
  });

  it('stand for their float32 tensors when validated, their shapes checked', () => {
    const tensors = randomModel(wide, 4).filter((t) => t.name !== 'layers.0.attention.wq.weight');
    const spec = { name: 'layers.0.attention.wq.weight', shape: [32, 32] };
    expect(errorOf(() => validateTensors(wide, tensors, 'm'))).toMatch(
      /missing \(1\): layers\.0\.attention\.wq\.weight \[32, 32\]/,
    );
    const valid = validateTensors(wide, tensors, 'm', [spec]);
    expect(valid.map((t) => t.name)).toEqual(tensors.map((t) => t.name)); // all but wq, in canonical order
    expect(errorOf(() => validateTensors(wide, tensors, 'm', [{ ...spec, shape: [32, 16] }]))).toMatch(
      /wrong shape \(1\): layers\.0\.attention\.wq\.weight expected \[32, 32\], found \[32, 16\]/,
    );
    const stray = { name: 'layers.9.attention.wq.weight', shape: [32, 32] };
    expect(errorOf(() => validateTensors(wide, tensors, 'm', [spec, stray]))).toMatch(
      /unexpected \(1\): layers\.9\.attention\.wq\.weight \[32, 32\]/,
    );
  });
});
