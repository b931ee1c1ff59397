import { describe, expect, it } from 'vitest';
import {
  checkMemoryLimits,
  inferenceMemory,
  kvCacheBytes,
  kvPositions,
  MemoryLimitError,
} from '../src/index';

/** The issue's example: a 7B Llama (32 layers, 32 heads of 128), fp16, batch 32, 2048 tokens. */
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

  it('sizes keys and values by an explicit headDim when the config names one (Qwen3)', () => {
    const memory = inferenceMemory(
      { ...shape, numKvHeads: 8, headDim: 256 },
      { batch: 1, seqLen: 100, parameters: 0, weightBytes: 4 },
    );
    expect(memory.kvCache).toBe(100 * 32 * 2 * 8 * 256 * 4);
    expect(memory.activations).toBe(4 * (100 * (5 * 4096 + 2 * 8 * 256 + 3 * 11008) + 32000));
  });

  it('caps the cache at a sliding window (a ring of W slots) and stays flat past it', () => {
    const mistral = { ...shape, numKvHeads: 8, hiddenDim: 14336, slidingWindow: 4096 };
    const at = (seqLen: number) =>
      inferenceMemory(mistral, { batch: 1, seqLen, parameters: 0, weightBytes: 2 });
    expect(at(1000).kvCache).toBe(1000 * 32 * 2 * 8 * 128 * 2);
    expect(at(4096).kvCache).toBe(4096 * 32 * 2 * 8 * 128 * 2);
    expect(at(32768).kvCache).toBe(at(4096).kvCache);
    expect(at(32768).activations).toBeGreaterThan(at(4096).activations);
    expect(kvPositions(mistral, 10_000)).toBe(4096);
    expect(kvPositions(shape, 10_000)).toBe(10_000);
  });
});

describe('checkMemoryLimits', () => {
  const llama = {
    preset: 'llama' as const,
    vocabSize: 32000,
    dim: 4096,
    numLayers: 32,
    numHeads: 32,
    numKvHeads: 8,
    hiddenDim: 11008,
  };

  /** The error `check` throws (it must throw one). */
  function refusal(check: () => void): MemoryLimitError {
    try {
      check();
    } catch (error) {
      if (error instanceof MemoryLimitError) return error;
      throw error;
    }
    throw new Error('expected a MemoryLimitError');
  }

  it('refuses a cache and prefill over totalBytes, giving the bytes, by arithmetic alone', () => {
    // 100 million positions: 100 TiB of float32 keys and values, which no machine here could allocate.
    const error = refusal(() => checkMemoryLimits(llama, 1e8, { totalBytes: 2 ** 37 }));
    const kv = kvCacheBytes({
      batch: 1,
      seqLen: 1e8,
      layers: 32,
      kvHeads: 8,
      headDim: 128,
      bytesPerElement: 4,
    });
    const { activations } = inferenceMemory(llama, { batch: 1, seqLen: 1e8, parameters: 0, weightBytes: 4 });
    expect([error.bytes, error.limit, error.limitBytes]).toEqual([kv + activations, 'totalBytes', 2 ** 37]);
    expect(error.message).toContain(
      `the KV cache of 100000000 positions takes ${kv} bytes (${(kv / 2 ** 30).toFixed(1)} GiB)`,
    );
    expect(error.message).toMatch(
      /more than the limit of 137438953472 bytes \(128\.0 GiB\) \(totalBytes\); use a shorter context$/,
    );
  });

  it('refuses one layer of keys over tensorBytes, and passes what fits', () => {
    const error = refusal(() => checkMemoryLimits(llama, 2 ** 20, { tensorBytes: 2 ** 31 }));
    expect(error.bytes).toBe(2 ** 20 * 8 * 128 * 4);
    expect(error.message).toMatch(
      /one layer's keys of 1048576 positions, \[1, 1048576, 8, 128\] float32, take 4294967296 bytes \(4\.0 GiB\)/,
    );
    expect(() =>
      checkMemoryLimits(llama, 2 ** 19, { tensorBytes: 2 ** 31, totalBytes: 2 ** 40 }),
    ).not.toThrow();
    expect(() => checkMemoryLimits(llama, 1e8, {})).not.toThrow();
  });

  it('refuses limits that are not positive numbers', () => {
    expect(() => checkMemoryLimits(llama, 10, { totalBytes: Number.NaN })).toThrow(
      /totalBytes must be a positive number of bytes or absent, got NaN/,
    );
  });
});
