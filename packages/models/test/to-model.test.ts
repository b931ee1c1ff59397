import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { scope, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  fromHfTensors,
  loadCheckpoint,
  loadModelFile,
  saveCheckpoint,
  tensorsFromTransformer,
  toHfTensors,
  transformerFromTensors,
} from '../src/index';
import { dataDir, errorOf, randomModel, tempDir, tinyGpt2, tinyLlama } from './helpers';

interface GoldenLogits {
  tokens: number[];
  logits: number[][];
}

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

describe('transformerFromTensors', () => {
  it('runs stories260K.bin to the reference logits at every position', async () => {
    const golden: { logits: GoldenLogits[] } = JSON.parse(
      readFileSync(join(dataDir, 'golden/stories260K.json'), 'utf8'),
    );
    const [{ tokens, logits }] = golden.logits;
    const model = transformerFromTensors(loadModelFile(join(dataDir, 'models/stories260K.bin')));
    const out = scope(() => model.forward(tensor([tokens], undefined, { dtype: 'i32' })));
    const values = await out.data();
    let worst = 0;
    logits.forEach((row, p) => {
      row.forEach((expected, j) => {
        worst = Math.max(worst, Math.abs(values[p * row.length + j] - expected));
      });
    });
    expect(worst).toBeLessThan(1e-4);
    out.dispose();
    model.dispose();
  });

  it('reads the weights back unchanged, in canonical order, for llama and gpt2', async () => {
    for (const config of [tinyLlama, tinyGpt2]) {
      const tensors = randomModel(config, 7);
      const model = transformerFromTensors({ config, tensors });
      expect(await tensorsFromTransformer(model)).toEqual(tensors);
      model.dispose();
    }
  });

  it('loads a trainer checkpoint and a Hugging Face layout into the same model', async () => {
    const tensors = randomModel(tinyLlama, 9);
    const dir = tempDir();
    saveCheckpoint(dir, { config: tinyLlama, tensors });
    const fromCheckpoint = transformerFromTensors(loadCheckpoint(dir));
    const fromHf = transformerFromTensors({
      config: tinyLlama,
      tensors: fromHfTensors(tinyLlama, toHfTensors(tinyLlama, tensors), 'hf'),
    });
    expect(await tensorsFromTransformer(fromHf)).toEqual(await tensorsFromTransformer(fromCheckpoint));
    fromCheckpoint.dispose();
    fromHf.dispose();
  });

  it('names missing and misshapen tensors and leaves nothing allocated', () => {
    const before = backend.liveCount();
    const tensors = randomModel(tinyLlama, 3).filter((t) => t.name !== 'norm.weight');
    const message = errorOf(() => transformerFromTensors({ config: tinyLlama, tensors }, 'tiny.safetensors'));
    expect(message).toMatch(/^tiny\.safetensors: .*missing \(1\): norm\.weight \[8\]/);
    expect(backend.liveCount()).toBe(before);
  });
});
