import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { Linear } from '@loom/nn';
import { HalfWeight, setBackend, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import {
  halfLinears,
  loadModelFile,
  serializeGguf,
  serializeSafetensors,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
} from '../src/index';
import { randomModel, tempDir, tinyLlama } from './helpers';

/** A Hugging Face Llama directory whose floats are all stored as `dtype`. */
function halfDirectory(dtype: 'BF16' | 'F16' | 'F32'): string {
  const dir = tempDir();
  const config = { ...tinyLlama, tiedEmbeddings: false };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(config)));
  const hf = toHfTensors(config, randomModel(config, 11));
  writeFileSync(join(dir, 'model.safetensors'), serializeSafetensors(hf, { floatDType: dtype }));
  return dir;
}

describe('16-bit checkpoints loaded with weights: quantized', () => {
  const backend = new CpuBackend();
  setBackend(backend);
  const ids = tensor(Int32Array.of(1, 5, 9, 3), [1, 4], { dtype: 'i32' });

  for (const [dtype, type] of [
    ['BF16', 'bf16'],
    ['F16', 'f16'],
  ] as const) {
    it(`${dtype}: every linear layer and the embedding read their ${type} weights, and the logits equal the widened model's`, async () => {
      const dir = halfDirectory(dtype);
      const widened = loadModelFile(dir);
      const kept = loadModelFile(dir, { weights: 'quantized' });
      expect(widened.halves).toBeUndefined();
      const linearCount = 1 + 7 * tinyLlama.numLayers; // output, and wq wk wv wo w1 w2 w3 per layer
      expect(kept.halves?.length).toBe(linearCount + 1); // and the embedding
      expect(kept.halves?.every((h) => h.type === type)).toBe(true);
      const reference = transformerFromTensors(widened);
      const model = transformerFromTensors(kept);
      const linears = [...model.modules()].filter((m) => m instanceof Linear);
      expect(linears.length).toBe(linearCount);
      for (const m of linears) expect(m.quantized).toBeInstanceOf(HalfWeight);
      expect(model.tokEmbeddings.quantized).toBeInstanceOf(HalfWeight);
      expect(model.tokEmbeddings.weight.isDisposed).toBe(true);
      const want = await reference.forward(ids).data();
      const got = await model.forward(ids).data();
      const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
      expect(worst).toBeLessThan(1e-4);
      reference.dispose();
      model.dispose();
    });
  }

  for (const [weightType, type] of [
    ['F16', 'f16'],
    ['BF16', 'bf16'],
  ] as const) {
    it(`a ${weightType} GGUF file: its linear weights and embedding are kept as the file's bytes, and the logits equal the widened model's`, async () => {
      const config = { ...tinyLlama, tiedEmbeddings: false };
      const path = join(tempDir(), `model-${type}.gguf`);
      writeFileSync(path, serializeGguf(config, randomModel(config, 13), { weightType }));
      const widened = loadModelFile(path);
      const kept = loadModelFile(path, { weights: 'quantized' });
      expect(widened.halves).toBeUndefined();
      expect(kept.halves?.length).toBe(2 + 7 * config.numLayers); // the output, the products and the embedding
      expect(kept.halves?.every((h) => h.type === type)).toBe(true);
      const start = backend.liveBytes();
      const reference = transformerFromTensors(widened);
      const f32Bytes = backend.liveBytes() - start;
      const model = transformerFromTensors(kept);
      // The linear weights and the embedding are held at 2 bytes a value instead of 4; the norms stay f32.
      const linearValues = (kept.halves ?? []).reduce((sum, h) => sum + h.shape[0] * h.shape[1], 0);
      expect(backend.liveBytes() - start - f32Bytes).toBe(f32Bytes - 2 * linearValues);
      const want = await reference.forward(ids).data();
      const got = await model.forward(ids).data();
      expect(Math.max(...got.map((v, i) => Math.abs(v - want[i])))).toBeLessThan(1e-4);
      reference.dispose();
      model.dispose();
    });
  }

  it('keeps F32 checkpoints in float32 (nothing to pack)', () => {
    expect(loadModelFile(halfDirectory('F32'), { weights: 'quantized' }).halves).toBeUndefined();
  });

  it('halfLinears rounds a float32 model to bf16: logits move by about bf16 rounding, not more', async () => {
    const config = { ...tinyLlama, tiedEmbeddings: false };
    const tensors = randomModel(config, 12);
    const reference = transformerFromTensors({ config, tensors });
    const model = transformerFromTensors({ config, tensors });
    expect(await halfLinears(model, 'bf16')).toBe(1 + 7 * config.numLayers);
    const want = await reference.forward(ids).data();
    const got = await model.forward(ids).data();
    const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
    const largest = Math.max(...want.map(Math.abs));
    expect(worst).toBeGreaterThan(0); // the products did read the rounded weights
    expect(worst).toBeLessThan(0.05 * largest);
    reference.dispose();
    model.dispose();
  });
});
