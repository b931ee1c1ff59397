import { CpuBackend } from '@loom/backend-cpu';
import { HalfWeight, packHalves, QuantizedWeight, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { Embedding, makeConfig, TransformerLM } from '../src/index';

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

/** A Q8_0 table [rows, 32] whose row r holds the value r + 1 everywhere (codes r + 1, scale 1). */
function q8Rows(rows: number): QuantizedWeight {
  const bytes = new Uint8Array(rows * 32);
  for (let r = 0; r < rows; r++) bytes.fill(r + 1, r * 32, (r + 1) * 32);
  return new QuantizedWeight(
    'q8_0',
    tensor(new Float32Array(rows).fill(1), [rows, 1]),
    tensor(new Int32Array(bytes.buffer), [rows, 8], { dtype: 'i32' }),
  );
}

describe('Embedding with a compact table', () => {
  it('looks rows up in its quantized table, with or without the f32 weight', async () => {
    const embedding = new Embedding(4, 32, 0.02, 1);
    embedding.useQuantized(q8Rows(4));
    const ids = tensor([3, 0, 9], [1, 3], { dtype: 'i32' });
    const expected = [...Array(32).fill(4), ...Array(32).fill(1), ...Array(32).fill(0)]; // id 9: out of range
    const before = embedding.forward(ids);
    expect(before.shape).toEqual([1, 3, 32]);
    expect(Array.from(await before.data())).toEqual(expected);
    const held = backend.liveBytes();
    embedding.releaseWeight();
    expect(held - backend.liveBytes()).toBe(4 * 32 * 4);
    const after = embedding.forward(ids);
    expect(Array.from(await after.data())).toEqual(expected);
    for (const t of [ids, before, after]) t.dispose();
    embedding.dispose();
  });

  it('reads 16-bit rows exactly', async () => {
    const values = Array.from({ length: 3 * 6 }, (_, i) => (i - 7) / 4);
    const embedding = new Embedding(3, 6, 0.02, 1);
    embedding.useQuantized(
      new HalfWeight('bf16', tensor(packHalves('bf16', values), [3, 3], { dtype: 'i32' })),
    );
    const ids = tensor([2, 1], [2], { dtype: 'i32' });
    const rows = embedding.forward(ids);
    expect(Array.from(await rows.data())).toEqual([...values.slice(12, 18), ...values.slice(6, 12)]);
    for (const t of [ids, rows]) t.dispose();
    embedding.dispose();
  });

  it('refuses a table of another shape, and a release with nothing to read instead', () => {
    const embedding = new Embedding(4, 32, 0.02, 1);
    const wrong = q8Rows(3);
    expect(() => embedding.useQuantized(wrong)).toThrow(
      /Embedding.useQuantized: weight \[3, 32\] does not match the layer's \[4, 32\]/,
    );
    expect(() => embedding.releaseWeight()).toThrow(
      /Embedding.releaseWeight: the layer \[4, 32\] has no quantized weight to read instead; call useQuantized first/,
    );
    wrong.dispose();
    embedding.dispose();
  });

  it('serves a tied output projection: the logits are the hidden states times the decoded table', async () => {
    const config = makeConfig('llama', {
      vocabSize: 4,
      dim: 32,
      hiddenDim: 64,
      numLayers: 1,
      numHeads: 4,
      maxSeqLen: 8,
      tiedEmbeddings: true,
    });
    const model = new TransformerLM(config).eval();
    model.tokEmbeddings.useQuantized(q8Rows(4));
    model.tokEmbeddings.releaseWeight();
    const h = tensor(new Float32Array(32).fill(0.5), [1, 1, 32]);
    const logits = model.project(h);
    expect(Array.from(await logits.data())).toEqual([16, 32, 48, 64]); // 32 · 0.5 · (r + 1)
    for (const t of [h, logits]) t.dispose();
    model.dispose();
  });
});
