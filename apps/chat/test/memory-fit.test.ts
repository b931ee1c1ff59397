import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModel } from '@loom/models';
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
