import { CpuBackend } from '@loom/backend-cpu';
import { Linear } from '@loom/nn';
import { dequantize, type QuantType, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { quantize } from '../src/gguf/quantize';
import {
  type GgufWriteOptions,
  type ModelConfig,
  parseModel,
  quantizedLinearWeights,
  repackGgufBlocks,
  serializeGguf,
  transformerFromTensors,
} from '../src/index';
import { errorOf, randomModel, tinyLlama } from './helpers';

/** Every matrix row a multiple of 256, so every linear weight can be a K-quant. */
const wide: ModelConfig = {
  ...tinyLlama,
  vocabSize: 16,
  dim: 256,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 512,
  maxSeqLen: 8,
  tiedEmbeddings: false,
};

/** GGUF's name of each type, for the in-process quantizer. */
const GGUF_NAMES = { q8_0: 'Q8_0', q4_0: 'Q4_0', q4_k: 'Q4_K', q6_k: 'Q6_K' } as const;

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

/** A file layout: how it is written, and the Loom type each linear weight must come back as. */
interface Layout {
  readonly label: string;
  readonly config: ModelConfig;
  readonly options: GgufWriteOptions;
  readonly typeOf: (name: string) => QuantType;
}

const LAYOUTS: readonly Layout[] = [
  { label: 'Q4_K', config: wide, options: { weightType: 'Q4_K' }, typeOf: () => 'q4_k' },
  { label: 'Q6_K', config: wide, options: { weightType: 'Q6_K' }, typeOf: () => 'q6_k' },
  {
    // As llama.cpp writes Q4_0 and Q4_K_M files: the output projection in Q6_K.
    label: 'Q4_0 with a Q6_K output projection',
    config: wide,
    options: { weightType: 'Q4_0', tensorTypes: { 'output.weight': 'Q6_K' } },
    typeOf: (name) => (name === 'output.weight' ? 'q6_k' : 'q4_0'),
  },
  {
    // A tied model as llama.cpp writes it: the embedding, which the output projection reads, in Q6_K.
    label: 'Q4_0 with a tied Q6_K embedding',
    config: { ...wide, tiedEmbeddings: true },
    options: { weightType: 'Q4_0', tensorTypes: { 'tok_embeddings.weight': 'Q6_K' } },
    typeOf: (name) => (name === 'tok_embeddings.weight' ? 'q6_k' : 'q4_0'),
  },
];

for (const layout of LAYOUTS) {
  describe(`GGUF ${layout.label} weights kept as blocks`, () => {
    const tensors = randomModel(layout.config, 5);
    const bytes = serializeGguf(layout.config, tensors, layout.options);
    const loaded = parseModel(bytes, undefined, 'k-quant.gguf', { weights: 'quantized' });
    const widenedModel = parseModel(bytes, undefined, 'k-quant.gguf'); // every weight widened to float32

    it('keeps every linear weight and the embedding as blocks equal to the in-process quantization of the same weights', async () => {
      const kept = loaded.quantized ?? [];
      // Seven products per layer, the embedding, and the output projection when untied.
      expect(kept.length).toBe(2 * 7 + (layout.config.tiedEmbeddings ? 1 : 2));
      const model = transformerFromTensors({ config: layout.config, tensors }, 'random');
      for (const type of new Set(kept.map((q) => layout.typeOf(q.name)))) {
        const inProcess = new Map((await quantizedLinearWeights(model, type)).map((q) => [q.name, q]));
        const embedding = tensors.find((t) => t.name === 'tok_embeddings.weight');
        if (embedding) {
          const shape: [number, number] = [layout.config.vocabSize, layout.config.dim];
          const blocks = quantize(embedding.data, GGUF_NAMES[type]);
          inProcess.set(embedding.name, repackGgufBlocks(embedding.name, type, shape, blocks));
        }
        for (const q of kept.filter((k) => layout.typeOf(k.name) === type)) {
          const own = inProcess.get(q.name);
          expect(q.type, q.name).toBe(type);
          expect(own?.type, q.name).toBe(type);
          expect(Array.from(q.scales), `${q.name} scales`).toEqual(Array.from(own?.scales ?? []));
          expect(Array.from(q.quants), `${q.name} quants`).toEqual(Array.from(own?.quants ?? []));
        }
      }
      model.dispose();
    });

    it('decodes its blocks to exactly the widened float32 weights', async () => {
      for (const q of loaded.quantized ?? []) {
        const [out] = q.shape;
        const widened = widenedModel.tensors.find((t) => t.name === q.name);
        const scales = tensor(q.scales, [out, q.scales.length / out]);
        const quants = tensor(q.quants, [out, q.quants.length / out], { dtype: 'i32' });
        const decoded = dequantize(q.type, scales, quants);
        // Equal as numbers: a zero code times a negative scale is -0 in one order of the products and +0 in the other.
        const numbers = (values: ArrayLike<number>) => Array.from(values, (v) => v + 0);
        expect(numbers(await decoded.data()), q.name).toEqual(numbers(widened?.data ?? []));
        for (const t of [scales, quants, decoded]) t.dispose();
      }
    });

    it('runs its products on the blocks, within int8 activation rounding of the widened model', async () => {
      const f32 = transformerFromTensors(widenedModel, 'f32');
      const quantized = transformerFromTensors(loaded, 'k-quant.gguf');
      const linears = [...quantized.modules()].filter((m) => m instanceof Linear);
      expect(linears.every((m) => m.quantized !== undefined)).toBe(true);
      expect(linears.length).toBe(layout.config.tiedEmbeddings ? 2 * 7 : 2 * 7 + 1);
      const ids = tensor([1, 5, 9, 3, 2], [1, 5], { dtype: 'i32' });
      const [a, b] = [await f32.forward(ids).data(), await quantized.forward(ids).data()];
      let [worst, largest] = [0, 0];
      for (let i = 0; i < a.length; i++) {
        worst = Math.max(worst, Math.abs(a[i] - b[i]));
        largest = Math.max(largest, Math.abs(a[i]));
      }
      expect(worst).toBeGreaterThan(0); // the products did read the blocks (x rounded to int8)
      // Rounding x to int8 moves this random model's logits by 2-3% of the largest for Q8_0, Q4_0 and the K-quants.
      expect(worst).toBeLessThanOrEqual(0.05 * largest);
      // The output projection alone: its blocks are read too (a tied model's through its embedding's blocks).
      const h = tensor(
        Array.from({ length: 2 * wide.dim }, (_, i) => Math.sin(i)),
        [2, wide.dim],
      );
      const [p, q] = [await f32.project(h).data(), await quantized.project(h).data()];
      const moved = p.map((v, i) => Math.abs(v - q[i]));
      expect(Math.max(...moved)).toBeGreaterThan(0);
      expect(Math.max(...moved)).toBeLessThanOrEqual(0.05 * Math.max(...p.map(Math.abs)));
      f32.dispose();
      quantized.dispose();
    });
  });
}

describe('K-quant GGUF blocks of the wrong size', () => {
  it('names a tensor whose rows are not whole super-blocks of 256', () => {
    expect(
      errorOf(() => repackGgufBlocks('layers.0.attention.wq.weight', 'q4_k', [4, 288], new Uint8Array(0))),
    ).toMatch(
      /layers\.0\.attention\.wq\.weight: a q4_k row must be a multiple of 256 values, got \[4, 288\]/,
    );
    expect(errorOf(() => repackGgufBlocks('output.weight', 'q6_k', [4, 288], new Uint8Array(0)))).toMatch(
      /output\.weight: a q6_k row must be a multiple of 256 values, got \[4, 288\]/,
    );
  });

  it('names a tensor whose bytes do not match its blocks', () => {
    expect(errorOf(() => repackGgufBlocks('w', 'q4_k', [2, 256], new Uint8Array(100)))).toMatch(
      /w: q4_k \[2, 256\] needs 288 bytes \(2 blocks of 144\), got 100/,
    );
    expect(errorOf(() => repackGgufBlocks('w', 'q6_k', [2, 256], new Uint8Array(100)))).toMatch(
      /w: q6_k \[2, 256\] needs 420 bytes \(2 blocks of 210\), got 100/,
    );
  });
});
