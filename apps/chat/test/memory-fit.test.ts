import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectedTensors, type LoadedModel, parseModel, serializeGguf } from '@loom/models';
import { describe, expect, it } from 'vitest';
import { checkModelFits } from '../src/worker/memory-fit';

const loaded = parseModel(
  readFileSync(join(import.meta.dirname, '../../../../shared/data/models/stories260K.bin')),
  undefined,
  'stories260K.bin',
);
const { dim, numLayers, numHeads, numKvHeads, hiddenDim, vocabSize, maxSeqLen } = loaded.config;
const kvWidth = numKvHeads * (dim / numHeads);
const weights = loaded.tensors.reduce((sum, tensor) => sum + 4 * tensor.shape.reduce((a, b) => a * b, 1), 0);
/** Bytes a context of `positions` adds, counted by hand: keys and values of every layer, one prefill's values. */
const added = (positions: number) =>
  4 * (2 * numLayers * positions * kvWidth + positions * (5 * dim + 2 * kvWidth + 3 * hiddenDim) + vocabSize);

/**
 * A model of stories260K's shape with `vocabSize` tokens, a hidden size of 256 and an untied output, its weights
 * small waves, written as a GGUF file of `weightType` and parsed with `weights: 'quantized'` (blocks or halves kept).
 */
function compactModel(vocabSize: number, weightType: 'Q8_0' | 'F16', source: string): LoadedModel {
  const config = { ...loaded.config, vocabSize, hiddenDim: 256, tiedEmbeddings: false };
  const tensors = expectedTensors(config).map(({ name, shape }) => ({
    name,
    shape,
    data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(i) / 8),
  }));
  return parseModel(serializeGguf(config, tensors, { weightType }), undefined, source, {
    weights: 'quantized',
  });
}

/** Whether `model` fits a context of 8 on WebGPU with one tensor of at most `tensorBytes` ("the limit"), as a thunk. */
const fitsUnder = (model: LoadedModel, source: string) => (tensorBytes: number) => () =>
  checkModelFits(model, source, 8, { backend: 'webgpu', tensorBytes, tensorLimit: 'the limit' });

describe('checkModelFits', () => {
  it('passes a model within the limits', () => {
    const limits = { backend: 'webgpu' as const, tensorBytes: 2 ** 27, totalBytes: 2 ** 30 };
    expect(() => checkModelFits(loaded, 'stories260K.bin', maxSeqLen, limits)).not.toThrow();
  });

  it('names the weight over the adapter limit and says to use the CPU backend', () => {
    const embedding = vocabSize * dim * 4;
    const limits = {
      backend: 'webgpu' as const,
      tensorBytes: embedding - 4,
      tensorLimit: "the adapter's maxBufferSize",
    };
    expect(() => checkModelFits(loaded, 'stories260K.bin', maxSeqLen, limits)).toThrow(
      `stories260K.bin: the weight tok_embeddings.weight [${vocabSize}, ${dim}] float32 takes ${embedding} bytes (0.0 GiB), ` +
        `more than the adapter's maxBufferSize of ${embedding - 4} bytes (0.0 GiB); use a smaller model, or run on ` +
        'the CPU backend (open the page with ?backend=cpu)',
    );
  });

  it("holds a quantized layer to its blocks' sizes, not its float32 form, which no backend allocates", () => {
    // w1 [256, 64]: 65536 bytes in float32, 16384 of Q8_0 codes (as words) and 2048 of scales; the rest is smaller.
    const fits = fitsUnder(compactModel(16, 'Q8_0', 'q8.gguf'), 'q8.gguf');
    expect(fits(16384)).not.toThrow();
    expect(fits(16383)).toThrow(
      'q8.gguf: the weight layers.0.feed_forward.w1.weight [256, 64] q8_0 codes take 16384 bytes (0.0 GiB), more than the limit',
    );
  });

  it("holds a 16-bit checkpoint's weights, the embedding's included, to their halves", () => {
    const gguf = compactModel(512, 'F16', 'f16.gguf');
    expect(gguf.halves?.map((h) => h.name)).toContain('tok_embeddings.weight');
    // The embedding [512, 64] (and the output projection, as large): 131072 bytes in float32, 65536 in f16.
    const fits = fitsUnder(gguf, 'f16.gguf');
    expect(fits(65536)).not.toThrow();
    expect(fits(65535)).toThrow(
      'f16.gguf: the weight tok_embeddings.weight [512, 64] f16 values take 65536 bytes (0.0 GiB), more than the limit',
    );
  });

  it('gives the largest context whose cache fits beside the weights', () => {
    const fits = 200;
    const totalBytes = weights + added(fits) + 1; // one byte short of what 201 positions need, at most
    expect(added(fits + 1)).toBeGreaterThan(added(fits) + 1);
    const limits = { backend: 'cpu' as const, totalBytes, totalLimit: 'the memory limit' };
    expect(() => checkModelFits(loaded, 'stories260K.bin', fits, limits)).not.toThrow();
    expect(() => checkModelFits(loaded, 'stories260K.bin', maxSeqLen, limits)).toThrow(
      new RegExp(
        `^stories260K\\.bin: a context of ${maxSeqLen} positions is too large beside the weights' ${weights} bytes .*` +
          `the memory limit\\. Set Context to ${fits} positions or fewer in the Model panel and load the model again$`,
      ),
    );
  });

  it('says when no context fits, and refuses a context outside [1, maxSeqLen]', () => {
    const limits = { backend: 'webgpu' as const, totalBytes: weights + added(1) - 1 };
    expect(() => checkModelFits(loaded, 'm.bin', 8, limits)).toThrow(
      /No context fits; use a smaller model, or run on the CPU backend \(open the page with \?backend=cpu\)$/,
    );
    expect(() => checkModelFits(loaded, 'm.bin', 0, { backend: 'cpu' })).toThrow(
      `Context must be a whole number of positions in [1, ${maxSeqLen}] (the model's maxSeqLen), got 0`,
    );
    expect(() => checkModelFits(loaded, 'm.bin', maxSeqLen + 1, { backend: 'cpu' })).toThrow(/got 513/);
  });
});
