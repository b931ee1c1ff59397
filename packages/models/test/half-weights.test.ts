import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { Linear } from '@loom/nn';
import { HalfWeight, setBackend, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import {
  halfLinears,
  loadModelFile,
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
  setBackend(new CpuBackend());
  const ids = tensor(Int32Array.of(1, 5, 9, 3), [1, 4], { dtype: 'i32' });

  for (const [dtype, type] of [
    ['BF16', 'bf16'],
    ['F16', 'f16'],
  ] as const) {
    it(`${dtype}: every linear layer reads its ${type} weight, and the logits equal the widened model's`, async () => {
      const dir = halfDirectory(dtype);
      const widened = loadModelFile(dir);
      const kept = loadModelFile(dir, { weights: 'quantized' });
      expect(widened.halves).toBeUndefined();
      const linearCount = 1 + 7 * tinyLlama.numLayers; // output, and wq wk wv wo w1 w2 w3 per layer
      expect(kept.halves?.length).toBe(linearCount);
      expect(kept.halves?.every((h) => h.type === type)).toBe(true);
      const reference = transformerFromTensors(widened);
      const model = transformerFromTensors(kept);
      const linears = [...model.modules()].filter((m) => m instanceof Linear);
      expect(linears.length).toBe(linearCount);
      for (const m of linears) expect(m.quantized).toBeInstanceOf(HalfWeight);
      const want = await reference.forward(ids).data();
      const got = await model.forward(ids).data();
      const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i])));
      expect(worst).toBeLessThan(1e-4);
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
