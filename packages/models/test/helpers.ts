import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { expectedTensors, type ModelConfig, type NamedTensor } from '../src/index';

/** The shared data folder, `../shared/data` beside the repository. */
export const dataDir = fileURLToPath(new URL('../../../../shared/data/', import.meta.url));

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'loom-models-'));
  made.push(dir);
  return dir;
}

/** A small seeded PRNG (mulberry32) giving values in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export function randomArray(length: number, random: () => number): Float32Array {
  return Float32Array.from({ length }, () => random() * 2 - 1);
}

/** Random values for every parameter of a config, in canonical order. */
export function randomModel(config: ModelConfig, seed = 1): NamedTensor[] {
  const random = seededRandom(seed);
  return expectedTensors(config).map(({ name, shape }) => ({
    name,
    shape,
    data: randomArray(
      shape.reduce((a, b) => a * b, 1),
      random,
    ),
  }));
}

export const tinyLlama: ModelConfig = {
  preset: 'llama',
  vocabSize: 11,
  dim: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  hiddenDim: 12,
  maxSeqLen: 6,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: true,
  bias: false,
};

export const tinyGpt2: ModelConfig = {
  preset: 'gpt2',
  vocabSize: 13,
  dim: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 2,
  hiddenDim: 32,
  maxSeqLen: 5,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: true,
  bias: true,
};

/** The error message `fn` throws (fails the test when it does not throw). */
export function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('expected an error, none was thrown');
}

export function tensorMap(tensors: readonly NamedTensor[]): Map<string, NamedTensor> {
  return new Map(tensors.map((tensor) => [tensor.name, tensor]));
}
