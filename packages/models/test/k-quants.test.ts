import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GGML_TYPES } from '../src/gguf/ggml-types';
import { dequantizeQ4K, dequantizeQ6K, quantizeQ4K, quantizeQ6K } from '../src/gguf/k-quants';

/** Blocks written by llama.cpp's own reference quantizer (scripts/k-quants-fixture.py). */
const fixture = JSON.parse(readFileSync(new URL('fixtures/k-quants.json', import.meta.url), 'utf8'));
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const floats = (b64: string) => {
  const raw = bytes(b64);
  return new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
};
const input = floats(fixture.input_f32);

const CASES = [
  ['Q4_K', quantizeQ4K, dequantizeQ4K, 12, 144],
  ['Q6_K', quantizeQ6K, dequantizeQ6K, 14, 210],
] as const;

describe.each(CASES)('%s', (name, quantize, dequantize, typeId, blockBytes) => {
  it('writes the bytes llama.cpp writes, block for block', () => {
    const expected = bytes(fixture[name].blocks);
    const ours = quantize(input);
    expect(ours.length).toBe((input.length / 256) * blockBytes);
    for (let b = 0; b < input.length / 256; b++) {
      const at = b * blockBytes;
      expect(Array.from(ours.subarray(at, at + blockBytes)), `block ${b}`).toEqual(
        Array.from(expected.subarray(at, at + blockBytes)),
      );
    }
  });

  it("dequantizes llama.cpp's blocks to llama.cpp's floats exactly", () => {
    const ours = dequantize(bytes(fixture[name].blocks), input.length);
    expect(Array.from(ours)).toEqual(Array.from(floats(fixture[name].dequantized_f32)));
  });

  it('is in the ggml type table with its block size and bytes per block', () => {
    expect(GGML_TYPES.get(typeId)).toMatchObject({ name, blockSize: 256, blockBytes });
  });

  it('round trips within its resolution on typical weights', () => {
    const roundTrip = dequantize(quantize(input.subarray(0, 256)), 256);
    const amax = Math.max(...input.subarray(0, 256).map(Math.abs));
    const bits = name === 'Q4_K' ? 4 : 6;
    for (let i = 0; i < 256; i++)
      expect(Math.abs(roundTrip[i] - input[i])).toBeLessThan((2 * amax) / 2 ** bits);
  });
});
