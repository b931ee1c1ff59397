import { expectedTensors, type ModelConfig, type NamedTensor, writeLlama2cFile } from '@loom/models';

/**
 * A llama whose every matrix row is a multiple of 256 (so Q4_K and Q6_K hold every matrix), with tok512's
 * vocabulary and grouped-query attention: the model the K-quant cross-check with llama.cpp runs.
 */
export const K_QUANT_LLAMA: ModelConfig = {
  preset: 'llama',
  vocabSize: 512,
  dim: 256,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 512,
  maxSeqLen: 128,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: false,
  bias: false,
};

/** mulberry32: values in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Deterministic weights scaled as shared/peers/make_random_llama.py scales them (embeddings ±0.25, norms 1 ± 0.1,
 * inputs ±1/√fan_in, output projections ±2/√fan_in), so logits are spread enough for greedy decoding to be stable.
 */
export function randomLlama(config: ModelConfig, seed: number): NamedTensor[] {
  const random = seeded(seed);
  const scaleOf = (name: string, shape: readonly number[]): [number, number] => {
    if (name === 'tok_embeddings.weight' || name === 'output.weight') return [0, 0.25];
    if (shape.length === 1) return [1, 0.1];
    const out = /attention\.wo|feed_forward\.w2/.test(name);
    return [0, (out ? 2 : 1) / Math.sqrt(shape[1])];
  };
  return expectedTensors(config).map(({ name, shape }) => {
    const [offset, scale] = scaleOf(name, shape);
    const count = shape.reduce((a, b) => a * b, 1);
    return {
      name,
      shape,
      data: Float32Array.from({ length: count }, () => offset + scale * (2 * random() - 1)),
    };
  });
}

/** Writes the K-quant cross-check model as a llama2.c .bin at `path`. */
export function writeKQuantLlama(path: string): void {
  writeLlama2cFile(path, K_QUANT_LLAMA, randomLlama(K_QUANT_LLAMA, 16));
}
