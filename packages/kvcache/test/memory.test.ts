import { describe, expect, it } from 'vitest';
import { inferenceMemory, kvCacheBytes } from '../src/index';

/** The example: a 7B Llama (32 layers, 32 heads of 128), fp16, batch 32, 2048 tokens. */
const llama7b = { batch: 32, seqLen: 2048, layers: 32, kvHeads: 32, headDim: 128, bytesPerElement: 2 };

describe('kvCacheBytes', () => {
  it('gives about 34.4 GB for the 7B example', () => {
    const bytes = kvCacheBytes(llama7b);
    expect(bytes).toBe(32 * 2048 * 32 * 2 * 32 * 128 * 2);
    expect(bytes / 1e9).toBeCloseTo(34.4, 1);
  });

  it('gives a quarter of that with 8 key/value groups', () => {
    expect(kvCacheBytes({ ...llama7b, kvHeads: 8 })).toBe(kvCacheBytes(llama7b) / 4);
    expect(kvCacheBytes({ ...llama7b, kvHeads: 8 }) / 1e9).toBeCloseTo(8.6, 1);
  });

  it('refuses negative or non-numeric sizes, naming the field', () => {
    expect(() => kvCacheBytes({ ...llama7b, seqLen: -1 })).toThrow(/seqLen must be a non-negative number/);
    expect(() => kvCacheBytes({ ...llama7b, headDim: Number.NaN })).toThrow(/headDim/);
  });
});

describe('inferenceMemory', () => {
  const shape = {
    preset: 'llama' as const,
    vocabSize: 32000,
    dim: 4096,
    numLayers: 32,
    numHeads: 32,
    numKvHeads: 32,
    hiddenDim: 11008,
  };

  it('adds weights, the cache and the activations of one prefill', () => {
    const memory = inferenceMemory(shape, {
      batch: 32,
      seqLen: 2048,
      parameters: 6_738_415_616,
      weightBytes: 2,
    });
    expect(memory.kvCache).toBe(kvCacheBytes(llama7b));
    expect(memory.weights).toBe(6_738_415_616 * 2);
    const perToken = 5 * 4096 + 2 * 4096 + 3 * 11008;
    expect(memory.activations).toBe(2 * (32 * 2048 * perToken + 32 * 32000));
    expect(memory.total).toBe(memory.weights + memory.kvCache + memory.activations);
  });

  it('takes separate element sizes for the cache and the activations', () => {
    const memory = inferenceMemory(
      { ...shape, numKvHeads: 8 },
      { batch: 1, seqLen: 100, parameters: 10, weightBytes: 1, kvBytes: 2, activationBytes: 4 },
    );
    expect(memory.kvCache).toBe(100 * 32 * 2 * 8 * 128 * 2);
    expect(memory.weights).toBe(10);
    expect(memory.activations).toBe(4 * (100 * (5 * 4096 + 2 * 8 * 128 + 3 * 11008) + 32000));
  });
});
