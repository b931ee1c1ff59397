import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { applyLora, type Lora, makeConfig, type Preset, TransformerLM } from '@loom/nn';
import { assign, setBackend, tensor } from '@loom/tensor';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  loadLoraAdapter,
  PEFT_FILES,
  parseSafetensors,
  saveLoraAdapter,
  serializeSafetensors,
  tensorsFromTransformer,
  toHfTensors,
} from '../src/index';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'loom-peft-'));
  dirs.push(d);
  return d;
}

function model(preset: Preset): TransformerLM {
  const config = makeConfig(preset, {
    vocabSize: 11,
    dim: 16,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: preset === 'llama' ? 2 : 4,
    maxSeqLen: 8,
  });
  return new TransformerLM(config, { seed: 5 }).eval();
}

function randomise(lora: Lora): void {
  let s = 9;
  for (const t of lora.parameters()) {
    const values = Float32Array.from({ length: t.size }, () => {
      s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
      return s / 2 ** 32 - 0.5;
    });
    const v = tensor(values, t.shape);
    assign(t, v);
    v.dispose();
  }
}

async function logits(m: TransformerLM): Promise<Float32Array> {
  const x = tensor(Int32Array.from([1, 4, 2, 9, 3, 7]), [1, 6], { dtype: 'i32' });
  const out = m.forward(x);
  const data = await out.float32Data();
  x.dispose();
  out.dispose();
  return data;
}

describe('PEFT LoRA adapters', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  it('writes PEFT names, shapes and config keys for llama', async () => {
    const m = model('llama');
    const lora = applyLora(m, {
      rank: 2,
      alpha: 4,
      dropout: 0.05,
      targets: ['q_proj', 'k_proj', 'v_proj', 'down_proj'],
    });
    const dir = tempDir();
    await saveLoraAdapter(dir, lora, 'stories260K');
    const config = JSON.parse(readFileSync(join(dir, PEFT_FILES.config), 'utf8'));
    expect(config).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 2,
      lora_alpha: 4,
      lora_dropout: 0.05,
      target_modules: ['q_proj', 'k_proj', 'v_proj', 'down_proj'],
      bias: 'none',
      fan_in_fan_out: false,
      base_model_name_or_path: 'stories260K',
    });
    const { tensors } = parseSafetensors(readFileSync(join(dir, PEFT_FILES.weights)));
    const shapes = Object.fromEntries(tensors.map((t) => [t.name, t.shape]));
    expect(shapes['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toEqual([2, 16]);
    expect(shapes['base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight']).toEqual([16, 2]);
    expect(shapes['base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight']).toEqual([8, 2]);
    expect(shapes['base_model.model.model.layers.1.mlp.down_proj.lora_A.weight']).toEqual([
      2,
      m.config.hiddenDim,
    ]);
    expect(tensors).toHaveLength(2 * 2 * 4);
    lora.dispose();
    m.dispose();
  });

  it('stores lora_B in the Hugging Face row order: W_hf + s·B·A is the HF form of the merged Loom weight', async () => {
    const m = model('llama');
    const lora = applyLora(m, { rank: 3, alpha: 6, targets: ['q_proj', 'k_proj'] });
    randomise(lora);
    const dir = tempDir();
    await saveLoraAdapter(dir, lora);
    const hfBase = toHfTensors(m.config, await tensorsFromTransformer(m));
    lora.merge();
    const hfMerged = toHfTensors(m.config, await tensorsFromTransformer(m));
    const { tensors } = parseSafetensors(readFileSync(join(dir, PEFT_FILES.weights)));
    const get = (name: string) => tensors.find((t) => t.name === name)!;
    for (const name of ['model.layers.1.self_attn.q_proj', 'model.layers.0.self_attn.k_proj']) {
      const a = get(`base_model.model.${name}.lora_A.weight`);
      const b = get(`base_model.model.${name}.lora_B.weight`);
      const w = hfBase.find((t) => t.name === `${name}.weight`)!;
      const merged = hfMerged.find((t) => t.name === `${name}.weight`)!;
      const [rows, cols] = w.shape;
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          let d = 0;
          for (let k = 0; k < 3; k++) d += b.data[i * 3 + k] * a.data[k * cols + j];
          expect(Math.abs(w.data[i * cols + j] + 2 * d - merged.data[i * cols + j])).toBeLessThan(1e-5);
        }
      }
    }
    lora.unmerge();
    lora.dispose();
    m.dispose();
  });

  it('loads back what it saved (llama and gpt2) into a model that then gives the same logits', async () => {
    for (const [preset, targets] of [
      ['llama', ['q_proj', 'k_proj', 'o_proj', 'up_proj']],
      ['gpt2', ['c_attn', 'c_proj', 'c_fc']],
    ] as const) {
      const m = model(preset);
      const lora = applyLora(m, { rank: 2, alpha: 8, targets });
      randomise(lora);
      const want = await logits(m);
      const dir = tempDir();
      await saveLoraAdapter(dir, lora);
      const config = JSON.parse(readFileSync(join(dir, PEFT_FILES.config), 'utf8'));
      expect(config.fan_in_fan_out).toBe(preset === 'gpt2');
      lora.dispose();
      const loaded = loadLoraAdapter(dir, m);
      expect(loaded.settings).toMatchObject({ rank: 2, alpha: 8, targets: [...targets] });
      const got = await logits(m);
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-6);
      loaded.dispose();
      m.dispose();
    }
  });

  it('refuses an adapter that does not fit the model, listing the problems before allocating', async () => {
    const m = model('llama');
    const lora = applyLora(m, { rank: 2, targets: ['q_proj', 'v_proj'] });
    const dir = tempDir();
    await saveLoraAdapter(dir, lora);
    lora.dispose();
    const configPath = join(dir, PEFT_FILES.config);
    const config = JSON.parse(readFileSync(configPath, 'utf8'));
    writeFileSync(configPath, JSON.stringify({ ...config, r: 4 }));
    expect(() => loadLoraAdapter(dir, m)).toThrow(
      /wrong shape \(r = 4\).*lora_A\.weight: expected \[4, 16\], got \[2, 16\]/,
    );
    writeFileSync(configPath, JSON.stringify({ ...config, target_modules: ['c_attn'] }));
    expect(() => loadLoraAdapter(dir, m)).toThrow(/c_attn is not a llama module name/);
    writeFileSync(configPath, JSON.stringify({ ...config, peft_type: 'IA3', use_dora: true }));
    expect(() => loadLoraAdapter(dir, m)).toThrow(/peft_type must be "LORA".*use_dora is not supported/);
    writeFileSync(configPath, JSON.stringify(config));
    const weightsPath = join(dir, PEFT_FILES.weights);
    const { tensors } = parseSafetensors(readFileSync(weightsPath));
    writeFileSync(weightsPath, serializeSafetensors(tensors.slice(1)));
    expect(() => loadLoraAdapter(dir, m)).toThrow(
      /missing: base_model\.model\.model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight/,
    );
    // Nothing was attached by the failed loads: a fresh adapter can still be applied.
    applyLora(m, { rank: 2 }).dispose();
    m.dispose();
  });
});
