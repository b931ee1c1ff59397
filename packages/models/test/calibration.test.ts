import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { quantizeQ4_0Calibrated } from '../src/gguf/calibrated-q4-0';
import { GGML_TYPES } from '../src/gguf/ggml-types';
import { quantize } from '../src/gguf/quantize';
import {
  collectInputStatistics,
  type InputStatistics,
  type ModelConfig,
  transformerFromTensors,
} from '../src/index';
import { randomModel, seededRandom, tinyLlama } from './helpers';

setBackend(new CpuBackend());

const dequantizeQ4_0 = (bytes: Uint8Array, count: number) => {
  const type = GGML_TYPES.get(2);
  if (type === undefined) throw new Error('no Q4_0 in GGML_TYPES');
  return type.dequantize(bytes, count);
};

/** Inputs [rows, size] with strongly correlated features (x = A z), as a layer's inputs are. */
function correlatedInputs(rows: number, size: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const rank = 8;
  const a = Float64Array.from({ length: size * rank }, normal);
  const x = new Float64Array(rows * size);
  for (let r = 0; r < rows; r++) {
    const z = Float64Array.from({ length: rank }, normal);
    for (let i = 0; i < size; i++) {
      let v = 0.1 * normal();
      for (let k = 0; k < rank; k++) v += a[i * rank + k] * z[k];
      x[r * size + i] = v;
    }
  }
  return x;
}

/** E[x xᵀ] [size, size] of inputs [rows, size]. */
function moments(x: Float64Array, rows: number, size: number): Float64Array {
  const m = new Float64Array(size * size);
  for (let r = 0; r < rows; r++)
    for (let i = 0; i < size; i++)
      for (let j = 0; j < size; j++) m[i * size + j] += (x[r * size + i] * x[r * size + j]) / rows;
  return m;
}

/** Mean over the inputs of the squared output error Σ_o ((W - Ŵ) x)_o², for W, Ŵ [out, size]. */
function outputError(w: Float32Array, approx: Float32Array, x: Float64Array, rows: number, size: number) {
  let total = 0;
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < w.length / size; o++) {
      let e = 0;
      for (let i = 0; i < size; i++) e += (w[o * size + i] - approx[o * size + i]) * x[r * size + i];
      total += e * e;
    }
  }
  return total / rows;
}

describe('quantizeQ4_0Calibrated', () => {
  const [out, size, rows] = [24, 96, 400];
  const random = seededRandom(3);
  const w = Float32Array.from({ length: out * size }, () => random() * 2 - 1);
  const x = correlatedInputs(rows, size, 4);
  const full: InputStatistics = { kind: 'full', size, rows, moments: moments(x, rows, size) };

  it('keeps the outputs on the calibration inputs closer than the reference rounding (GPTQ)', () => {
    const reference = outputError(w, dequantizeQ4_0(quantize(w, 'Q4_0'), w.length), x, rows, size);
    const calibrated = outputError(
      w,
      dequantizeQ4_0(quantizeQ4_0Calibrated(w, full), w.length),
      x,
      rows,
      size,
    );
    expect(calibrated).toBeLessThan(0.6 * reference);
  });

  it('with diagonal moments, rounds each block no worse in the importance-weighted error', () => {
    const importance = Float64Array.from({ length: size }, (_, i) => 0.05 + (i % 7) ** 2);
    const diagonal: InputStatistics = { kind: 'diagonal', size, rows, moments: importance };
    const weighted = (approx: Float32Array) =>
      w.reduce((sum, v, k) => sum + importance[k % size] * (v - approx[k]) ** 2, 0);
    const reference = weighted(dequantizeQ4_0(quantize(w, 'Q4_0'), w.length));
    const calibrated = weighted(dequantizeQ4_0(quantizeQ4_0Calibrated(w, diagonal), w.length));
    expect(calibrated).toBeLessThan(0.95 * reference);
  });

  it('writes blocks of the layout the reference writes (scale, then 16 bytes of two levels each)', () => {
    const bytes = quantizeQ4_0Calibrated(w, full);
    expect(bytes.length).toBe(quantize(w, 'Q4_0').length);
    const back = dequantizeQ4_0(bytes, w.length);
    const rms = Math.sqrt(w.reduce((s, v, k) => s + (v - back[k]) ** 2, 0) / w.length);
    expect(rms).toBeLessThan(0.15); // levels 1/8 of the block's extreme apart, errors compensated across columns
  });

  it('refuses a weight that is not rows of the statistics’ input size, and statistics of the wrong length', () => {
    expect(() => quantizeQ4_0Calibrated(new Float32Array(100), full)).toThrow(
      /100 values are not rows of 96 \(the statistics' input size\) in whole blocks of 32/,
    );
    const short: InputStatistics = { ...full, moments: new Float64Array(96) };
    expect(() => quantizeQ4_0Calibrated(w, short)).toThrow(
      /full statistics of 96 features hold 96 moments; expected 9216/,
    );
  });
});

describe('collectInputStatistics', () => {
  const config: ModelConfig = {
    ...tinyLlama,
    dim: 32,
    numHeads: 4,
    numKvHeads: 2,
    hiddenDim: 1056,
    maxSeqLen: 8,
  };
  const model = transformerFromTensors({ config, tensors: randomModel(config, 5) }, 'tiny').eval();
  const sequences = [
    [1, 2, 3, 4, 5, 6],
    [7, 3, 9, 10, 0, 2],
  ];

  it('gives every linear layer the second moments of its inputs, shared by the layers reading one input', async () => {
    const stats = await collectInputStatistics(model, sequences);
    const names = [...stats.keys()];
    expect(names).toHaveLength(config.numLayers * 7);
    const wq = stats.get('layers.0.attention.wq.weight');
    expect(stats.get('layers.0.attention.wk.weight')).toBe(wq);
    expect(stats.get('layers.0.attention.wv.weight')).toBe(wq);
    expect(stats.get('layers.0.attention.wo.weight')).not.toBe(wq);
    expect(wq).toMatchObject({ kind: 'full', size: 32, rows: 12 });
    // The same moments from the layer's input computed here: the attention norm of the token embeddings.
    const ids = tensor(Int32Array.from(sequences.flat()), [2, 6]);
    const input = await model.layers[0].attentionNorm.forward(model.tokEmbeddings.forward(ids)).float32Data();
    const direct = moments(Float64Array.from(input), 12, 32);
    const got = wq?.moments ?? new Float64Array();
    expect(got.length).toBe(32 * 32);
    const worst = got.reduce((max, v, k) => Math.max(max, Math.abs(v - direct[k])), 0);
    expect(worst).toBeLessThan(1e-4);
  });

  it('keeps only the diagonal for inputs wider than 1024 features', async () => {
    const stats = await collectInputStatistics(model, sequences);
    const w2 = stats.get('layers.1.feed_forward.w2.weight');
    expect(w2).toMatchObject({ kind: 'diagonal', size: 1056, rows: 12 });
    expect(w2?.moments.length).toBe(1056);
    expect(w2?.moments.every((v) => v >= 0)).toBe(true);
    expect(stats.get('layers.1.feed_forward.w1.weight')?.kind).toBe('full');
  });

  it('refuses sequences of different lengths and leaves no observer behind', async () => {
    await expect(collectInputStatistics(model, [[1, 2], [3]])).rejects.toThrow(
      /expected sequences of one non-zero length, got lengths 2, 1/,
    );
    const stats = await collectInputStatistics(model, sequences);
    expect(stats.size).toBe(14);
    const linear = model.layers[0].attention.wq;
    expect(linear.inputObserver).toBeUndefined();
  });
});
