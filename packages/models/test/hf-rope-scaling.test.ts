import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  loadCheckpoint,
  loadModelFile,
  type ModelConfig,
  parseHfConfig,
  saveCheckpoint,
  serializeGguf,
  serializeLlama2c,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
  writeSafetensorsFile,
} from '../src/index';
import { errorOf, randomModel, tempDir, tinyLlama } from './helpers';

/** The RoPE keys of Llama-3.1-8B's config.json, on a model small enough to write with random weights. */
const llama3Json = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  vocab_size: 11,
  max_position_embeddings: 64,
  rms_norm_eps: 1e-5,
  rope_theta: 500000.0,
  rope_scaling: {
    factor: 8.0,
    low_freq_factor: 1.0,
    high_freq_factor: 4.0,
    original_max_position_embeddings: 16,
    rope_type: 'llama3',
  },
  hidden_act: 'silu',
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
};

describe('RoPE scaling in config.json', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  it('reads each rope_scaling type with its keys, and "default" or null as none', () => {
    expect(parseHfConfig(llama3Json).ropeScaling).toEqual({
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxSeqLen: 16,
    });
    const read = (rope_scaling: unknown) => parseHfConfig({ ...llama3Json, rope_scaling }).ropeScaling;
    expect(read({ type: 'linear', factor: 2 })).toEqual({ type: 'linear', factor: 2 });
    // transformers' dynamic scaling starts past max_position_embeddings and ignores an original context.
    expect(read({ rope_type: 'dynamic', factor: 2, original_max_position_embeddings: 8 })).toEqual({
      type: 'dynamic',
      factor: 2,
    });
    expect(
      read({
        rope_type: 'yarn',
        factor: 4,
        original_max_position_embeddings: 16,
        beta_fast: 32,
        beta_slow: 1,
        mscale: 0.8,
        mscale_all_dim: 0.8,
        truncate: false,
      }),
    ).toEqual({
      type: 'yarn',
      factor: 4,
      originalMaxSeqLen: 16,
      betaFast: 32,
      betaSlow: 1,
      mscale: 0.8,
      mscaleAllDim: 0.8,
      truncate: false,
    });
    expect(read({ rope_type: 'default' })).toBeUndefined();
    expect(read(null)).toBeUndefined();
  });

  it('refuses malformed scalings by key', () => {
    const bad = (rope_scaling: unknown) =>
      errorOf(() => parseHfConfig({ ...llama3Json, rope_scaling }, 'c.json'));
    expect(bad({ rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4 })).toMatch(
      /^c\.json: key "rope_scaling.original_max_position_embeddings": expected an integer/,
    );
    expect(bad({ type: 'linear', factor: -1 })).toMatch(
      /key "rope_scaling.factor": expected a positive number/,
    );
    expect(bad({ type: 'linear', factor: 0.5 })).toMatch(/factor must be a number >= 1, got 0.5/);
    expect(bad([1])).toMatch(/key "rope_scaling": expected an object/);
    expect(errorOf(() => parseHfConfig({ ...llama3Json, partial_rotary_factor: 0.5 }, 'c.json'))).toMatch(
      /key "partial_rotary_factor" is 0.5; Loom rotates the whole head/,
    );
  });

  it('a Llama-3-style directory with small random weights loads and runs; Loom checkpoints keep the scaling', async () => {
    const config = parseHfConfig(llama3Json);
    const tensors = randomModel(config, 7);
    const hfDir = tempDir();
    writeFileSync(join(hfDir, 'config.json'), JSON.stringify(llama3Json));
    writeSafetensorsFile(join(hfDir, 'model.safetensors'), toHfTensors(config, tensors));
    const loaded = loadModelFile(hfDir);
    expect(loaded.config).toEqual(config);
    const model = transformerFromTensors(loaded);
    const ids = tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 20], {
      dtype: 'i32',
    });
    const logits = await model.forward(ids).data();
    expect(logits).toHaveLength(20 * 11);
    expect(logits.every(Number.isFinite)).toBe(true);
    // The same weights under plain RoPE give other logits past the first position.
    const { ropeScaling: _, ...plainConfig } = config;
    const plain = transformerFromTensors({ config: plainConfig, tensors });
    const plainLogits = await plain.forward(ids).data();
    expect(Math.max(...logits.map((v, i) => Math.abs(v - plainLogits[i])))).toBeGreaterThan(1e-6);
    model.dispose();
    plain.dispose();

    const loomDir = tempDir();
    saveCheckpoint(loomDir, { config, tensors });
    expect(loadCheckpoint(loomDir).config).toEqual(config);
    expect(parseHfConfig(toHfConfig(config))).toEqual(config);
  });

  it('writes and reads back every type through toHfConfig and Loom checkpoints', () => {
    const scalings: ModelConfig['ropeScaling'][] = [
      { type: 'linear', factor: 2 },
      { type: 'dynamic', factor: 4 },
      { type: 'yarn', factor: 4, originalMaxSeqLen: 3, attentionFactor: 1.2 },
      { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxSeqLen: 4 },
    ];
    for (const ropeScaling of scalings) {
      const config: ModelConfig = { ...tinyLlama, ropeScaling };
      expect(parseHfConfig(toHfConfig(config))).toEqual(config);
      const dir = tempDir();
      saveCheckpoint(dir, { config, tensors: randomModel(config) });
      expect(loadCheckpoint(dir).config).toEqual(config);
    }
  });

  it('refuses to write a scaled model to formats without its keys (llama2.c, GGUF)', () => {
    const config: ModelConfig = { ...tinyLlama, ropeScaling: { type: 'linear', factor: 2 } };
    const tensors = randomModel(config);
    expect(errorOf(() => serializeLlama2c(config, tensors))).toMatch(
      /ropeScaling linear \(run\.c has plain RoPE\)/,
    );
    expect(errorOf(() => serializeGguf(config, tensors))).toMatch(/this model has ropeScaling linear/);
  });
});
