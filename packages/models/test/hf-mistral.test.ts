import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import type { TransformerLM } from '@loom/nn';
import { scope, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  loadCheckpoint,
  loadModelFile,
  type ModelConfig,
  parseHfConfig,
  saveCheckpoint,
  serializeLlama2c,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
  writeSafetensorsFile,
} from '../src/index';
import { errorOf, randomModel, tempDir } from './helpers';

/** A Mistral-7B-v0.1-style config.json, shrunk: grouped-query heads and a window of 3 positions. */
const mistralJson = {
  architectures: ['MistralForCausalLM'],
  model_type: 'mistral',
  vocab_size: 13,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 12,
  rms_norm_eps: 1e-5,
  rope_theta: 10000.0,
  hidden_act: 'silu',
  sliding_window: 3,
  tie_word_embeddings: false,
  torch_dtype: 'float32',
};

const TOKENS = [4, 1, 7, 12, 0, 3, 9, 5, 2, 11];

async function logits(model: TransformerLM, tokens: readonly number[]): Promise<Float32Array> {
  const out = scope(() => model.forward(tensor([tokens], undefined, { dtype: 'i32' })));
  const data = Float32Array.from(await out.data());
  out.dispose();
  return data;
}

function worst(a: Float32Array, b: Float32Array, from: number, to: number): number {
  let max = 0;
  for (let i = from; i < to; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

describe('Mistral config.json (sliding_window)', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  it('reads sliding_window into slidingWindow, null as full attention, and writes it back', () => {
    const config = parseHfConfig(mistralJson);
    expect(config.slidingWindow).toBe(3);
    expect(config.numKvHeads).toBe(2);
    expect(parseHfConfig({ ...mistralJson, sliding_window: null }).slidingWindow).toBeUndefined();
    const hf = toHfConfig(config);
    expect(hf.architectures).toEqual(['MistralForCausalLM']);
    expect(hf.sliding_window).toBe(3);
    expect(parseHfConfig(hf)).toEqual(config);
  });

  it('refuses a window that is not a positive integer, naming the key', () => {
    for (const bad of [0, -4, 2.5, 'big']) {
      expect(errorOf(() => parseHfConfig({ ...mistralJson, sliding_window: bad }))).toMatch(/sliding_window/);
    }
  });

  it('loads a directory of small random weights that runs with the window', async () => {
    const config = parseHfConfig(mistralJson);
    const tensors = randomModel(config, 7);
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify(mistralJson));
    writeSafetensorsFile(join(dir, 'model.safetensors'), toHfTensors(config, tensors));
    const loaded = loadModelFile(dir);
    expect(loaded.config).toEqual(config);
    const model = transformerFromTensors(loaded).eval();
    const { slidingWindow: _, ...unwindowed } = config;
    const full = transformerFromTensors({ config: unwindowed, tensors: loaded.tensors }).eval();
    const vocab = config.vocabSize;
    const [a, b] = [await logits(model, TOKENS), await logits(full, TOKENS)];
    for (const x of a) expect(Number.isFinite(x)).toBe(true);
    // The first 3 positions see no further back than the window; later ones do differ from full attention.
    expect(worst(a, b, 0, 3 * vocab)).toBeLessThan(1e-5);
    expect(worst(a, b, 3 * vocab, TOKENS.length * vocab)).toBeGreaterThan(1e-4);
    // Two layers of window 3: position 9 reads back to position 5 only, so the first tokens do not reach it.
    const changed = await logits(model, [10, 10, 10, 10, 10, ...TOKENS.slice(5)]);
    expect(worst(a, changed, 9 * vocab, 10 * vocab)).toBeLessThan(1e-6);
    expect(worst(a, changed, 6 * vocab, 7 * vocab)).toBeGreaterThan(1e-4);
    model.dispose();
    full.dispose();
  });

  it('keeps the window in a Loom checkpoint and refuses a llama2.c file', () => {
    const config: ModelConfig = parseHfConfig(mistralJson);
    const tensors = randomModel(config, 3);
    const dir = tempDir();
    saveCheckpoint(dir, { config, tensors });
    expect(loadCheckpoint(dir).config.slidingWindow).toBe(3);
    expect(errorOf(() => serializeLlama2c(config, tensors))).toMatch(/slidingWindow=3/);
  });
});
