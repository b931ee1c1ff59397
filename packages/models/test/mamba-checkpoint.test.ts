import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { MambaLM, makeMambaConfig } from '@loom/nn';
import { scope, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectedTensors,
  isMambaConfig,
  loadAnyCheckpoint,
  loadCheckpoint,
  loadModelFile,
  mambaFromTensors,
  type NamedTensor,
  saveCheckpoint,
} from '../src/index';
import { errorOf, randomModel, tempDir, tinyLlama } from './helpers';

beforeAll(() => setBackend(new CpuBackend()));

/** A MambaLM's parameters as the model names them, read back from the backend. */
async function parametersOf(model: MambaLM): Promise<NamedTensor[]> {
  const out: NamedTensor[] = [];
  for (const [name, p] of model.namedParameters()) {
    out.push({ name, shape: [...p.shape], data: await p.float32Data() });
  }
  return out;
}

describe('Mamba checkpoints', () => {
  for (const tiedEmbeddings of [true, false]) {
    it(`expects exactly MambaLM's parameters and round-trips them (${tiedEmbeddings ? 'tied' : 'untied'})`, async () => {
      const config = makeMambaConfig({
        vocabSize: 11,
        dim: 8,
        numLayers: 2,
        stateSize: 3,
        dtRank: 2,
        tiedEmbeddings,
      });
      const model = new MambaLM(config, { seed: 5 });
      const tensors = await parametersOf(model);
      model.dispose();
      expect(expectedTensors(config)).toEqual(tensors.map(({ name, shape }) => ({ name, shape })));
      const dir = tempDir();
      saveCheckpoint(dir, { config, tensors, tokenizerJson: '{}' });
      const json = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(json).toMatchObject({ format: 'loom', arch: 'mamba', stateSize: 3, expand: 2, convWidth: 4 });
      const loaded = loadAnyCheckpoint(dir);
      expect(isMambaConfig(loaded.config)).toBe(true);
      expect(loaded.config).toEqual(config);
      expect(loaded.tensors).toEqual(tensors);
      expect(loaded.tokenizerJson).toBe('{}');
    });
  }

  it("mambaFromTensors rebuilds a model that gives the saved one's logits", async () => {
    const config = makeMambaConfig({ vocabSize: 9, dim: 8, numLayers: 2, stateSize: 4 });
    const original = new MambaLM(config, { seed: 3 });
    const dir = tempDir();
    saveCheckpoint(dir, { config, tensors: await parametersOf(original) });
    const loaded = loadAnyCheckpoint(dir);
    if (!isMambaConfig(loaded.config)) throw new Error('expected a Mamba config');
    const rebuilt = mambaFromTensors({ config: loaded.config, tensors: loaded.tensors }, dir);
    const tokens = [1, 4, 8, 0, 2];
    const logits = async (model: MambaLM) => {
      const out = scope(() => model.forward(tensor([tokens], undefined, { dtype: 'i32' })));
      const values = await out.data();
      out.dispose();
      return values;
    };
    expect(await logits(rebuilt)).toEqual(await logits(original));
    original.dispose();
    rebuilt.dispose();
    expect(() =>
      mambaFromTensors({ config: { ...config, dim: 12 }, tensors: loaded.tensors }, 'weights.safetensors'),
    ).toThrow(
      /weights\.safetensors: the tensors do not match .* wrong shape \(\d+\): embedding\.weight expected \[9, 12\], found \[9, 8\]/,
    );
  });

  it('reads a transformer checkpoint through loadAnyCheckpoint as before, and refuses Mamba where a transformer is expected', () => {
    const llamaDir = tempDir();
    const tensors = randomModel(tinyLlama, 3);
    saveCheckpoint(llamaDir, { config: tinyLlama, tensors });
    const any = loadAnyCheckpoint(llamaDir);
    expect(isMambaConfig(any.config)).toBe(false);
    expect(any.config).toEqual(tinyLlama);
    expect(any.tensors).toEqual(loadCheckpoint(llamaDir).tensors);

    const config = makeMambaConfig({ vocabSize: 5, dim: 4, numLayers: 1 });
    const mambaDir = tempDir();
    saveCheckpoint(mambaDir, { config, tensors: mambaWeights(config) });
    expect(errorOf(() => loadCheckpoint(mambaDir))).toMatch(
      /config\.json: key "arch" is "mamba": not a transformer/,
    );
    expect(errorOf(() => loadModelFile(mambaDir))).toMatch(/key "arch" is "mamba": not a transformer/);
  });

  it('names the file, the tensor, and expected against found shapes', () => {
    const config = makeMambaConfig({ vocabSize: 5, dim: 4, numLayers: 2 });
    const tensors = mambaWeights(config).map((t) =>
      t.name === 'layers.1.mixer.A_log' ? { ...t, shape: [16, 8], data: new Float32Array(128) } : t,
    );
    const dir = tempDir();
    expect(errorOf(() => saveCheckpoint(dir, { config, tensors }))).toMatch(
      /model\.safetensors: the tensors do not match the model of its config \(mamba dim=4 layers=2 state=16 .*\) — wrong shape \(1\): layers\.1\.mixer\.A_log expected \[8, 16\], found \[16, 8\]/,
    );
    expect(errorOf(() => saveCheckpoint(dir, { config, tensors: mambaWeights(config).slice(1) }))).toMatch(
      /missing \(1\): embedding\.weight \[5, 4\]/,
    );
  });

  it('refuses a config.json with bad Mamba sizes or an unknown architecture before reading any weight', () => {
    const config = makeMambaConfig({ vocabSize: 5, dim: 4, numLayers: 1 });
    const dir = tempDir();
    saveCheckpoint(dir, { config, tensors: mambaWeights(config) });
    const path = join(dir, 'config.json');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...json, expand: 99 }));
    expect(errorOf(() => loadAnyCheckpoint(dir))).toMatch(
      /config\.json: invalid Mamba config: expand=99 is over Loom's limit of 16/,
    );
    writeFileSync(path, JSON.stringify({ ...json, stateSize: 0 }));
    expect(errorOf(() => loadAnyCheckpoint(dir))).toMatch(/config\.json: key "stateSize"/);
    writeFileSync(path, JSON.stringify({ ...json, arch: 'rwkv' }));
    expect(errorOf(() => loadAnyCheckpoint(dir))).toMatch(
      /config\.json: key "arch" is "rwkv"; Loom checkpoints hold "mamba"/,
    );
  });
});

/** Deterministic weights of the shapes `expectedTensors` gives (their values do not matter here). */
function mambaWeights(config: ReturnType<typeof makeMambaConfig>): NamedTensor[] {
  return expectedTensors(config).map(({ name, shape }) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(i + name.length);
    return { name, shape, data };
  });
}
