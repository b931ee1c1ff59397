import { CpuBackend } from '@loom/backend-cpu';
import { QuantizedWeight, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { Linear, makeConfig, TransformerLM } from '../src/index';

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

/** A Q8_0 weight [out, inner] of zero codes and scales (inner a multiple of 32). */
function q8Zeros(out: number, inner: number): QuantizedWeight {
  const scales = tensor(new Float32Array((out * inner) / 32), [out, inner / 32]);
  const quants = tensor(new Int32Array((out * inner) / 4), [out, inner / 4], { dtype: 'i32' });
  return new QuantizedWeight('q8_0', scales, quants);
}

function tinyLlama(tiedEmbeddings = true): TransformerLM {
  const config = makeConfig('llama', {
    vocabSize: 64,
    dim: 32,
    hiddenDim: 64,
    numLayers: 2,
    numHeads: 4,
    maxSeqLen: 16,
    tiedEmbeddings,
  });
  return new TransformerLM(config).eval();
}

describe('TransformerLM.weightBytes and stepWeightBytes', () => {
  it('counts the f32 parameters of a plain model once each (the tied embedding once)', () => {
    const before = backend.liveBytes();
    const model = tinyLlama();
    expect(model.weightBytes).toBe(backend.liveBytes() - before);
    expect(model.weightBytes).toBe(4 * model.parameters().reduce((n, p) => n + p.size, 0));
    // The tied output reads the whole table.
    expect(model.stepWeightBytes).toBe(model.weightBytes);
    model.dispose();
  });

  it('counts the quantized copies the products read and not the f32 weights the layers released', () => {
    const before = backend.liveBytes();
    const model = tinyLlama();
    const f32 = model.weightBytes;
    let released = 0;
    let compact = 0;
    for (const m of model.modules()) {
      if (!(m instanceof Linear)) continue;
      const w = q8Zeros(m.outFeatures, m.inFeatures);
      compact += w.bytes;
      m.useQuantized(w);
      m.releaseWeight();
      released += m.outFeatures * m.inFeatures * 4;
    }
    const tied = q8Zeros(64, 32);
    compact += tied.bytes;
    model.tokEmbeddings.useQuantized(tied);
    expect(released).toBeGreaterThan(0);
    expect(model.weightBytes).toBe(f32 - released + compact);
    expect(model.weightBytes).toBe(backend.liveBytes() - before);
    // The output and the lookups read the table's blocks: a step does not read the f32 table it still holds.
    expect(model.stepWeightBytes).toBe(model.weightBytes - 4 * 64 * 32);
    model.tokEmbeddings.releaseWeight();
    expect(model.weightBytes).toBe(f32 - released - 4 * 64 * 32 + compact);
    expect(model.weightBytes).toBe(backend.liveBytes() - before);
    expect(model.stepWeightBytes).toBe(model.weightBytes);
    model.dispose();
  });

  it('counts one row of an untied embedding, in the form the lookups read', () => {
    const model = tinyLlama(false);
    expect(model.stepWeightBytes).toBe(model.weightBytes - 4 * 63 * 32);
    const table = q8Zeros(64, 32);
    model.tokEmbeddings.useQuantized(table);
    model.tokEmbeddings.releaseWeight();
    expect(model.stepWeightBytes).toBe(model.weightBytes - (table.bytes * 63) / 64);
    model.dispose();
  });
});
