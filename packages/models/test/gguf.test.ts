import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileSource } from '../src/file-source';
import { readGgufHeader } from '../src/gguf/header';
import { quantize } from '../src/gguf/quantize';
import { describeConfig, loadModelFile, parseModel, serializeGguf } from '../src/index';
import { dataDir, errorOf } from './helpers';

const gguf = (name: string) => join(dataDir, 'gguf', name);

/**
 * The float32 value at body index `i` of `make_random_llama.py` (shared/peers): a splitmix64 counter stream, as its
 * docstring defines it, so the weights llama.cpp quantized can be rebuilt here without the `.bin`.
 */
function randomLlamaFloat(seed: bigint, i: number, offset: number, scale: number): number {
  const mask = (1n << 64n) - 1n;
  let z = (seed + BigInt(i + 1) * 0x9e3779b97f4a7c15n) & mask;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
  z ^= z >> 31n;
  const u = Number(z >> 40n) / 2 ** 24;
  return Math.fround(offset + scale * (2 * u - 1));
}

/** rand15M (dim 288, 6 layers, vocab 32000, seed 1): layer 0's wq, which follows the embeddings and 6 rms_att rows. */
function rand15MLayer0Wq(): Float32Array {
  const dim = 288;
  const start = 32000 * dim + 6 * dim;
  return Float32Array.from({ length: dim * dim }, (_, i) =>
    randomLlamaFloat(1n, start + i, 0, 1 / Math.sqrt(dim)),
  );
}

describe('GGUF', () => {
  it('reads stories260K written by llama.cpp: config from metadata, tensors, and its SentencePiece vocabulary', () => {
    const loaded = loadModelFile(gguf('stories260K-F32.gguf'));
    expect(loaded.format).toBe('gguf');
    expect(describeConfig(loaded.config)).toBe(
      'llama dim=64 hidden=172 layers=5 heads=8 kvHeads=4 vocab=512 seqLen=128 untied',
    );
    const bin = loadModelFile(join(dataDir, 'models', 'stories260K.bin'));
    const byName = new Map(bin.tensors.map((tensor) => [tensor.name, tensor]));
    for (const tensor of loaded.tensors) {
      const reference =
        tensor.name === 'output.weight' ? byName.get('tok_embeddings.weight') : byName.get(tensor.name);
      expect(tensor.shape, tensor.name).toEqual(reference?.shape);
      expect(tensor.data, tensor.name).toEqual(reference?.data);
    }
    const tokenizer = JSON.parse(loaded.tokenizerJson ?? '{}');
    expect(tokenizer.kind).toBe('llama2c');
    expect(tokenizer.pieces.slice(259, 262)).toEqual([' t', 'he', ' a']);
  });

  it.each([
    ['rand15M-Q8_0.gguf', 'Q8_0', 127, 0.5],
    ['rand15M-Q4_0.gguf', 'Q4_0', 8, 1],
  ])(
    'dequantizes %s within the %s rounding of the weights llama.cpp was given',
    (file, _type, levels, steps) => {
      if (!existsSync(gguf(file))) throw new Error(`${gguf(file)} is missing; the shared data is incomplete`);
      const loaded = loadModelFile(gguf(file));
      const wq = loaded.tensors.find((tensor) => tensor.name === 'layers.0.attention.wq.weight');
      const original = rand15MLayer0Wq();
      expect(wq?.shape).toEqual([288, 288]);
      let worst = 0;
      for (let block = 0; block < original.length / 32; block++) {
        const values = original.subarray(block * 32, block * 32 + 32);
        const step = Math.max(...values.map(Math.abs)) / levels;
        for (let i = 0; i < 32; i++) {
          const error = Math.abs((wq?.data[block * 32 + i] ?? Number.NaN) - values[i]);
          // Rounding to the grid, plus the scale's own rounding to float16 (2^-11 relative) times the largest level.
          expect(error).toBeLessThanOrEqual(step * (steps + levels / 2048) + 1e-7);
          worst = Math.max(worst, error / step);
        }
      }
      expect(worst).toBeGreaterThan(0.1); // the values really are quantized, not copied
    },
  );

  it('refuses a corrupt header by arithmetic before allocating, naming what is wrong', () => {
    const header = (version: number, tensors: bigint, kvs: bigint) => {
      const bytes = new Uint8Array(64);
      const view = new DataView(bytes.buffer);
      view.setUint32(0, 0x46554747, true);
      view.setUint32(4, version, true);
      view.setBigUint64(8, tensors, true);
      view.setBigUint64(16, kvs, true);
      return bytes;
    };
    expect(errorOf(() => parseModel(header(3, 1n, 1n << 40n), undefined, 'a.gguf'))).toMatch(
      /^a\.gguf: 1099511627776 metadata entries needs \d+ bytes at byte 24 but the file has 40 left/,
    );
    expect(errorOf(() => parseModel(header(1, 0n, 0n), undefined, 'b.gguf'))).toMatch(
      /^b\.gguf: GGUF version 1; Loom reads versions 2 and 3/,
    );
    const string = header(3, 0n, 1n);
    new DataView(string.buffer).setBigUint64(24, 1n << 50n, true);
    expect(errorOf(() => parseModel(string, undefined, 'c.gguf'))).toMatch(
      /^c\.gguf: metadata key 0 needs 1125899906842624 bytes at byte 32 but the file has 32 left/,
    );
  });

  it('writes GGUF that reads back to the same weights and vocabulary', () => {
    const original = loadModelFile(gguf('stories260K-F32.gguf'));
    const vocabulary = JSON.parse(original.tokenizerJson ?? '{}');
    const bytes = serializeGguf(original.config, original.tensors, { vocabulary });
    const again = parseModel(bytes, undefined, 'again.gguf');
    expect(again.config).toEqual(original.config);
    expect(again.tensors).toEqual(original.tensors);
    expect(again.tokenizerJson).toBe(original.tokenizerJson);
  });

  it("writes a sliding-window model's window as llama.attention.sliding_window and reads it back", () => {
    const original = loadModelFile(gguf('stories260K-F32.gguf'));
    const key = 'llama.attention.sliding_window';
    expect(Buffer.from(serializeGguf(original.config, original.tensors)).includes(key)).toBe(false);
    const config = { ...original.config, slidingWindow: 24 };
    const bytes = serializeGguf(config, original.tensors);
    expect(Buffer.from(bytes).includes(key)).toBe(true);
    const again = parseModel(bytes, undefined, 'windowed.gguf');
    expect(again.config).toEqual(config);
    expect(again.tensors).toEqual(original.tensors);
  });

  it.each(['Q8_0', 'Q4_0'] as const)('quantizes to %s byte for byte as llama.cpp did', (type) => {
    const file = gguf(`rand15M-${type}.gguf`);
    const stored = withFileSource(file, 'a GGUF file', (source) => {
      const info = readGgufHeader(source).tensors.find((tensor) => tensor.name === 'blk.0.attn_q.weight');
      if (info === undefined) throw new Error(`${file} has no blk.0.attn_q.weight`);
      const length = (288 * 288 * (type === 'Q8_0' ? 34 : 18)) / 32;
      return new Uint8Array(source.read(info.offset, info.offset + length));
    });
    expect(Buffer.from(quantize(rand15MLayer0Wq(), type)).equals(Buffer.from(stored))).toBe(true);
  });
});
