import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { activeParameterCount, parameterCount, type TransformerLM } from '@loom/nn';
import { scope, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  loadCheckpoint,
  loadModelFile,
  type NamedTensor,
  parseHfConfig,
  saveCheckpoint,
  serializeLlama2c,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
  writeSafetensorsFile,
} from '../src/index';
import { errorOf, randomModel, tempDir } from './helpers';

/** A Mixtral-8x7B-style config.json, shrunk: 4 experts, 2 per token. */
const mixtralJson = {
  architectures: ['MixtralForCausalLM'],
  model_type: 'mixtral',
  vocab_size: 13,
  hidden_size: 16,
  intermediate_size: 20,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 12,
  rms_norm_eps: 1e-5,
  rope_theta: 1e6,
  hidden_act: 'silu',
  sliding_window: null,
  num_local_experts: 4,
  num_experts_per_tok: 2,
  router_aux_loss_coef: 0.02,
  tie_word_embeddings: false,
  torch_dtype: 'float32',
};

const TOKENS = [4, 1, 7, 12, 0, 3, 9, 5, 2, 11];

async function logits(model: TransformerLM): Promise<Float32Array> {
  const out = scope(() => model.forward(tensor([TOKENS], undefined, { dtype: 'i32' })));
  const data = Float32Array.from(await out.data());
  out.dispose();
  return data;
}

function worst(a: Float32Array, b: Float32Array): number {
  return a.reduce((max, x, i) => Math.max(max, Math.abs(x - b[i])), 0);
}

/** Swaps experts 0 and 1 of every layer: their weights and their router rows. */
function swapExperts(tensors: readonly NamedTensor[], dim: number): NamedTensor[] {
  const renamed = (name: string) =>
    name.replace(/experts\.([01])\./, (_, e: string) => `experts.${e === '0' ? 1 : 0}.`);
  return tensors.map((t) => {
    if (!t.name.endsWith('feed_forward.gate.weight')) return { ...t, name: renamed(t.name) };
    const data = t.data.slice();
    data.set(t.data.subarray(0, dim), dim);
    data.set(t.data.subarray(dim, 2 * dim), 0);
    return { ...t, data };
  });
}

describe('Mixtral config.json (sparse mixture of experts)', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  it('reads the expert keys into moe (dropless) and writes them back', () => {
    const config = parseHfConfig(mixtralJson);
    expect(config.moe).toEqual({ experts: 4, topK: 2, auxLossCoef: 0.02, capacityFactor: 2 });
    expect(config.slidingWindow).toBeUndefined();
    const {
      num_local_experts: _,
      num_experts_per_tok: __,
      router_aux_loss_coef: ___,
      ...defaults
    } = mixtralJson;
    expect(parseHfConfig(defaults).moe).toEqual({
      experts: 8,
      topK: 2,
      auxLossCoef: 0.001,
      capacityFactor: 4,
    });
    const hf = toHfConfig(config);
    expect(hf.architectures).toEqual(['MixtralForCausalLM']);
    expect(hf.num_local_experts).toBe(4);
    expect(parseHfConfig(hf)).toEqual(config);
    expect(parameterCount(config) - activeParameterCount(config)).toBe(2 * 2 * 3 * 16 * 20);
  });

  it('refuses bad expert counts, naming the key', () => {
    expect(errorOf(() => parseHfConfig({ ...mixtralJson, num_local_experts: 0 }))).toMatch(
      /num_local_experts/,
    );
    expect(errorOf(() => parseHfConfig({ ...mixtralJson, num_experts_per_tok: 5 }))).toMatch(
      /num_experts_per_tok/,
    );
    expect(errorOf(() => parseHfConfig({ ...mixtralJson, router_aux_loss_coef: -1 }))).toMatch(
      /auxLossCoef must be a finite number >= 0/,
    );
  });

  it('loads a directory of small random weights under block_sparse_moe names and runs it', async () => {
    const config = parseHfConfig(mixtralJson);
    const tensors = randomModel(config, 7).map((t) => ({ ...t, data: t.data.map((x) => 0.5 * x) }));
    const hfTensors = toHfTensors(config, tensors);
    const names = hfTensors.map((t) => t.name);
    expect(names).toContain('model.layers.1.block_sparse_moe.gate.weight');
    expect(names).toContain('model.layers.0.block_sparse_moe.experts.3.w2.weight');
    expect(names.some((n) => n.includes('mlp.'))).toBe(false);
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify(mixtralJson));
    writeSafetensorsFile(join(dir, 'model.safetensors'), hfTensors);
    const loaded = loadModelFile(dir);
    expect(loaded.config).toEqual(config);
    const model = transformerFromTensors(loaded).eval();
    const a = await logits(model);
    for (const x of a) expect(Number.isFinite(x)).toBe(true);
    // Relabelling experts (weights and router rows together) leaves the model unchanged; the weights alone do not.
    const swapped = transformerFromTensors({
      config,
      tensors: swapExperts(loaded.tensors, config.dim),
    }).eval();
    expect(worst(a, await logits(swapped))).toBeLessThan(1e-5);
    const weightsOnly = swapExperts(loaded.tensors, config.dim).map((t, i) =>
      t.name.endsWith('gate.weight') ? loaded.tensors[i] : t,
    );
    const mismatched = transformerFromTensors({ config, tensors: weightsOnly }).eval();
    expect(worst(a, await logits(mismatched))).toBeGreaterThan(1e-4);
    for (const m of [model, swapped, mismatched]) m.dispose();
  });

  it('keeps the experts in a Loom checkpoint and refuses a llama2.c file', () => {
    const config = parseHfConfig(mixtralJson);
    const tensors = randomModel(config, 3);
    const dir = tempDir();
    saveCheckpoint(dir, { config, tensors });
    expect(loadCheckpoint(dir).config.moe).toEqual(config.moe);
    expect(errorOf(() => serializeLlama2c(config, tensors))).toMatch(/4 experts/);
  });
});
