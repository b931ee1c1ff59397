import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectedTensors,
  llama2cFileBytes,
  type ModelConfig,
  parseLlama2c,
  readLlama2cFile,
  serializeLlama2c,
  writeLlama2cFile,
} from '../src/index';
import { dataDir, errorOf, randomModel, tempDir, tensorMap, tinyLlama } from './helpers';

const storiesPath = join(dataDir, 'models/stories260K.bin');
const stories = readFileSync(storiesPath);

/** Where the two legacy RoPE tables lie in a file of this config, in bytes. */
function ropeTableSpan(config: ModelConfig): [number, number] {
  const tableBytes = 2 * config.maxSeqLen * (config.dim / config.numHeads / 2) * 4;
  const end = llama2cFileBytes(config) - (config.tiedEmbeddings ? 0 : config.vocabSize * config.dim * 4);
  return [end - tableBytes, end];
}

describe('llama2.c checkpoints', () => {
  it('reads stories260K.bin', () => {
    const { config, tensors } = readLlama2cFile(storiesPath);
    expect(config).toEqual({
      preset: 'llama',
      vocabSize: 512,
      dim: 64,
      numLayers: 5,
      numHeads: 8,
      numKvHeads: 4,
      hiddenDim: 172,
      maxSeqLen: 512,
      normEps: 1e-5,
      ropeTheta: 10000,
      tiedEmbeddings: true,
      bias: false,
    });
    expect(tensors.map((t) => t.name).sort()).toEqual(
      expectedTensors(config)
        .map((t) => t.name)
        .sort(),
    );
    const byName = tensorMap(tensors);
    const embeddings = byName.get('tok_embeddings.weight')!;
    expect(embeddings.shape).toEqual([512, 64]);
    // Figures computed independently with numpy from the same file.
    let sum = 0;
    for (const value of embeddings.data) sum += value;
    expect(sum).toBeCloseTo(-752.3677446640068, 6);
    const close = (values: ArrayLike<number>, expected: number[]) => {
      for (const [i, value] of expected.entries()) expect(values[i]).toBeCloseTo(value, 6);
    };
    close(
      [embeddings.data[0], embeddings.data[1], embeddings.data[64 * 100 + 5]],
      [-0.29474878, 0.5618956, 0.23131946],
    );
    const wq = byName.get('layers.0.attention.wq.weight')!;
    expect(wq.shape).toEqual([64, 64]);
    close(wq.data, [0.04439279, 0.07974771, -0.00892535]);
    expect(byName.get('layers.0.attention.wk.weight')!.shape).toEqual([32, 64]);
    expect(byName.get('layers.4.feed_forward.w2.weight')!.shape).toEqual([64, 172]);
    close(byName.get('norm.weight')!.data, [2.458309, 1.3673227, 1.7504382, 1.1078318]);
  });

  it('writes stories260K.bin back identically (the RoPE tables to float32 rounding)', () => {
    const { config, tensors } = parseLlama2c(stories, 'stories260K.bin');
    const written = serializeLlama2c(config, tensors);
    expect(written.length).toBe(stories.length);
    const [ropeBegin, ropeEnd] = ropeTableSpan(config);
    expect(Buffer.compare(written.subarray(0, ropeBegin), stories.subarray(0, ropeBegin))).toBe(0);
    expect(Buffer.compare(written.subarray(ropeEnd), stories.subarray(ropeEnd))).toBe(0);
    const ours = new Float32Array(written.slice(ropeBegin, ropeEnd).buffer);
    const theirs = new Float32Array(
      stories.buffer.slice(stories.byteOffset + ropeBegin, stories.byteOffset + ropeEnd),
    );
    expect(Math.max(...ours.map((value, i) => Math.abs(value - theirs[i])))).toBeLessThan(1e-6);
  });

  it('round-trips tied and untied models through a file', () => {
    for (const tiedEmbeddings of [true, false]) {
      const config = { ...tinyLlama, tiedEmbeddings };
      const tensors = randomModel(config, 7);
      const path = join(tempDir(), 'tiny.bin');
      writeLlama2cFile(path, config, tensors);
      const bytes = readFileSync(path);
      expect(bytes.length).toBe(llama2cFileBytes(config));
      expect(new DataView(bytes.buffer, bytes.byteOffset).getInt32(20, true)).toBe(
        tiedEmbeddings ? config.vocabSize : -config.vocabSize,
      );
      const back = readLlama2cFile(path);
      expect(back.config).toEqual(config);
      expect(tensorMap(back.tensors)).toEqual(tensorMap(tensors));
    }
  });

  it('computes the file size of the stories15M shape as llama2.c writes it', () => {
    const stories15M = { ...tinyLlama, dim: 288, hiddenDim: 768, numLayers: 6, numHeads: 6, numKvHeads: 6 };
    expect(llama2cFileBytes({ ...stories15M, vocabSize: 32000, maxSeqLen: 256 })).toBe(60816028);
  });

  it('says how a truncated file or one with trailing bytes differs from its header', () => {
    expect(errorOf(() => parseLlama2c(stories.subarray(0, 1000), 'stories260K.bin'))).toBe(
      'stories260K.bin: header says dim=64 hidden=172 layers=5 heads=8 kvHeads=4 vocab=512 seqLen=512, so expected 1056540 bytes but the file holds 1000 — the file is truncated, or the header is corrupt',
    );
    const longer = new Uint8Array(stories.length + 6);
    longer.set(stories);
    expect(errorOf(() => parseLlama2c(longer, 'stories260K.bin'))).toMatch(
      /^stories260K\.bin: header says .*, so expected 1056540 bytes but the file holds 1056546 — 6 bytes too many/,
    );
    expect(errorOf(() => parseLlama2c(stories.subarray(0, 12), 'x.bin'))).toMatch(
      /x\.bin: 12 bytes is too short for a llama2\.c checkpoint .* truncated/,
    );
  });

  it('refuses impossible headers and versioned exports', () => {
    const header = (values: number[]) => new Uint8Array(Int32Array.from(values).buffer);
    expect(errorOf(() => parseLlama2c(header([64, 172, 0, 8, 4, 512, 512]), 'x.bin'))).toMatch(
      /x\.bin: header says .*layers=0.*; expected positive sizes .* numLayers is not — not a llama2\.c checkpoint/,
    );
    expect(errorOf(() => parseLlama2c(header([64, 172, 5, 8, 3, 512, 512]), 'x.bin'))).toMatch(
      /x\.bin: header says .*: numHeads=8 must be a multiple of numKvHeads=3/,
    );
    expect(errorOf(() => parseLlama2c(header([0x616b3432, 2, 0, 0, 0, 0, 0]), 'x.bin'))).toMatch(
      /x\.bin: a versioned llama2\.c export \(magic "ak42", version 2\); Loom reads the legacy version 0 format/,
    );
  });

  it('refuses to write what the format cannot hold, and invalid tensors', () => {
    const tensors = randomModel(tinyLlama);
    expect(errorOf(() => serializeLlama2c({ ...tinyLlama, normEps: 1e-6 }, tensors, 'out.bin'))).toMatch(
      /out\.bin: a llama2\.c checkpoint cannot hold this model .*normEps=0\.000001 \(run\.c uses 0\.00001\) — save it as safetensors instead/,
    );
    expect(errorOf(() => serializeLlama2c(tinyLlama, tensors.slice(1), 'out.bin'))).toMatch(
      /out\.bin: the tensors do not match .* missing \(1\): tok_embeddings\.weight \[11, 8\]/,
    );
  });
});
