import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  fromHfTensors,
  loadCheckpoint,
  loadModelFile,
  type ModelConfig,
  parseHfConfig,
  saveCheckpoint,
  serializeSafetensors,
  tensorsFromTransformer,
  toHfConfig,
  toHfTensors,
  transformerFromTensors,
  writeSafetensorsFile,
} from '../src/index';
import { errorOf, randomModel, tempDir, tinyLlama } from './helpers';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

const tinyQwen2: ModelConfig = { ...tinyLlama, qkvBias: true, ropeTheta: 1e6, tiedEmbeddings: true };
const tinyQwen3: ModelConfig = { ...tinyLlama, qkNorm: true, headDim: 6, tiedEmbeddings: false };

const qwen2Json = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  hidden_act: 'silu',
  tie_word_embeddings: true,
  use_sliding_window: false,
  sliding_window: 32768,
  max_window_layers: 21,
  rope_scaling: null,
};

const qwen3Json = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  vocab_size: 151936,
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  max_position_embeddings: 40960,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  hidden_act: 'silu',
  attention_bias: false,
  tie_word_embeddings: true,
  use_sliding_window: false,
  sliding_window: null,
  max_window_layers: 28,
};

describe('Qwen2 and Qwen3 config.json', () => {
  it('reads Qwen2 (q/k/v biases) and Qwen3 (q/k norms, explicit head_dim) into the one model config', () => {
    expect(parseHfConfig(qwen2Json)).toEqual({
      preset: 'llama',
      vocabSize: 151936,
      dim: 896,
      numLayers: 24,
      numHeads: 14,
      numKvHeads: 2,
      hiddenDim: 4864,
      maxSeqLen: 32768,
      normEps: 1e-6,
      ropeTheta: 1e6,
      tiedEmbeddings: true,
      bias: false,
      qkvBias: true,
    });
    const qwen3 = parseHfConfig(qwen3Json);
    expect(qwen3).toMatchObject({
      dim: 1024,
      numHeads: 16,
      headDim: 128,
      qkNorm: true,
      tiedEmbeddings: true,
    });
    expect(qwen3.qkvBias).toBeUndefined();
    // Qwen3Config's head_dim default is 128, whatever hidden_size / heads is; Qwen2's is hidden_size / heads.
    const { head_dim: _, ...noHeadDim } = qwen3Json;
    expect(parseHfConfig({ ...noHeadDim, hidden_size: 512 }).headDim).toBe(128);
    expect(parseHfConfig({ ...qwen3Json, head_dim: 64 }).headDim).toBeUndefined();
    expect(parseHfConfig({ ...qwen2Json, architectures: undefined }).qkvBias).toBe(true);
  });

  it('refuses sliding windows and Qwen3 attention biases by key', () => {
    expect(errorOf(() => parseHfConfig({ ...qwen2Json, use_sliding_window: true }, 'c.json'))).toMatch(
      /^c\.json: key "use_sliding_window" is true; Loom has no sliding-window attention yet/,
    );
    const types = { ...qwen3Json, layer_types: ['full_attention', 'sliding_attention'] };
    expect(errorOf(() => parseHfConfig(types, 'c.json'))).toMatch(
      /key "layer_types\[1\]" is "sliding_attention"; Loom has full attention only/,
    );
    expect(errorOf(() => parseHfConfig({ ...qwen2Json, max_window_layers: 'all' }, 'c.json'))).toMatch(
      /key "max_window_layers"/,
    );
    expect(errorOf(() => parseHfConfig({ ...qwen3Json, attention_bias: true }, 'c.json'))).toMatch(
      /key "attention_bias" is true; it puts a bias on o_proj too/,
    );
    expect(errorOf(() => parseHfConfig({ ...qwen3Json, head_dim: 0 }, 'c.json'))).toMatch(/key "head_dim"/);
    expect(errorOf(() => parseHfConfig({ ...qwen3Json, head_dim: 7 }, 'c.json'))).toMatch(
      /headDim must be even, got 7/,
    );
  });

  it('writes Qwen2ForCausalLM, Qwen3ForCausalLM or LlamaForCausalLM back, read back as the same config', () => {
    const wide = { ...tinyLlama, headDim: 6 };
    for (const config of [tinyQwen2, tinyQwen3, wide]) {
      expect(parseHfConfig(JSON.parse(JSON.stringify(toHfConfig(config))))).toEqual(config);
    }
    expect(toHfConfig(tinyQwen2).architectures).toEqual(['Qwen2ForCausalLM']);
    expect(toHfConfig(tinyQwen3)).toMatchObject({ model_type: 'qwen3', head_dim: 6, attention_bias: false });
    expect(toHfConfig(wide)).toMatchObject({ model_type: 'llama', head_dim: 6 });
    expect(errorOf(() => toHfConfig({ ...tinyQwen3, qkvBias: true }))).toMatch(
      /no Hugging Face architecture has q\/k norms and q\/k\/v biases/,
    );
  });
});

describe('Qwen2 and Qwen3 tensors', () => {
  it('round-trips Loom -> HF -> Loom, with the HF names and the q/k biases and norms permuted for RoPE', () => {
    for (const config of [tinyQwen2, tinyQwen3]) {
      const loom = randomModel(config, 4);
      const hf = toHfTensors(config, loom);
      const names = hf.map((t) => t.name);
      if (config.qkvBias) {
        expect(names).toContain('model.layers.1.self_attn.q_proj.bias');
        expect(names).toContain('model.layers.0.self_attn.v_proj.bias');
        expect(names).not.toContain('model.layers.0.self_attn.o_proj.bias');
      } else {
        expect(names).toContain('model.layers.1.self_attn.q_norm.weight');
        expect(names).toContain('model.layers.0.self_attn.k_norm.weight');
      }
      expect(names.includes('lm_head.weight')).toBe(!config.tiedEmbeddings);
      expect(fromHfTensors(config, [...hf].reverse())).toEqual(loom);
      // Within each head, HF element j < hd/2 is Loom element 2j (rotate-half against interleaved pairs).
      const hd = config.headDim ?? config.dim / config.numHeads;
      const suffix = config.qkvBias ? 'attention.wk.bias' : 'attention.k_norm.weight';
      const hfSuffix = config.qkvBias ? 'self_attn.k_proj.bias' : 'self_attn.k_norm.weight';
      const loomK = loom.find((t) => t.name === `layers.0.${suffix}`)!.data;
      const hfK = hf.find((t) => t.name === `model.layers.0.${hfSuffix}`)!.data;
      for (let j = 0; j < hd / 2; j++) {
        expect(hfK[j]).toBe(loomK[2 * j]);
        expect(hfK[hd / 2 + j]).toBe(loomK[2 * j + 1]);
      }
    }
  });

  it('needs lm_head.weight when tie_word_embeddings is false, and names the key', () => {
    const hf = toHfTensors(tinyQwen3, randomModel(tinyQwen3)).filter((t) => t.name !== 'lm_head.weight');
    expect(errorOf(() => fromHfTensors(tinyQwen3, hf, 'q.safetensors'))).toMatch(
      /^q\.safetensors: has no lm_head\.weight, but the config does not tie the embeddings \(tie_word_embeddings/,
    );
  });

  it('saves and loads Qwen-style models as Loom checkpoints and Hugging Face directories', async () => {
    setBackend(new CpuBackend());
    for (const config of [tinyQwen2, tinyQwen3]) {
      const tensors = randomModel(config, 5);
      const loomDir = tempDir();
      saveCheckpoint(loomDir, { config, tensors });
      const checkpoint = loadCheckpoint(loomDir);
      expect(checkpoint.config).toEqual(config);
      expect(checkpoint.tensors).toEqual(tensors);
      const hfDir = tempDir();
      writeFileSync(join(hfDir, 'config.json'), JSON.stringify(toHfConfig(config)));
      writeSafetensorsFile(join(hfDir, 'model.safetensors'), toHfTensors(config, tensors));
      const loaded = loadModelFile(hfDir);
      expect(loaded.config).toEqual(config);
      expect(loaded.tensors).toEqual(tensors);
      const model = transformerFromTensors(loaded);
      expect(await tensorsFromTransformer(model)).toEqual(tensors);
      model.dispose();
    }
  });
});

/** The logits of the PyTorch reference (scripts/qwen_reference.py) for its token sequence. */
function referenceOf(dir: string): { tokens: number[]; vocab: number; logits: number[] } {
  const json = JSON.parse(readFileSync(join(fixtures, dir, 'logits.json'), 'utf8'));
  return { tokens: json.tokens, vocab: json.vocab_size, logits: json.logits };
}

describe('Qwen checkpoints written by a PyTorch reference', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  for (const [dir, reference] of [
    ['hf-qwen2', 'hf-qwen2'],
    ['hf-qwen3', 'hf-qwen3'],
    ['hf-qwen3-sharded', 'hf-qwen3'],
  ] as const) {
    it(`${dir}: Loom's logits match the reference's within 1e-4`, async () => {
      const loaded = loadModelFile(join(fixtures, dir));
      expect(loaded.format).toBe('hf');
      expect(loaded.config.qkvBias === true).toBe(reference === 'hf-qwen2');
      expect(loaded.config.qkNorm === true).toBe(reference === 'hf-qwen3');
      const { tokens, vocab, logits } = referenceOf(reference);
      expect(logits.length).toBe(tokens.length * vocab);
      const model = transformerFromTensors(loaded);
      const out = model.forward(tensor(Int32Array.from(tokens), [1, tokens.length])); // [1, T, vocab]
      const got = await out.float32Data();
      out.dispose();
      model.dispose();
      let worst = 0;
      for (let i = 0; i < logits.length; i++) worst = Math.max(worst, Math.abs(got[i] - logits[i]));
      expect(worst).toBeLessThan(1e-4);
      expect(Math.max(...logits.map(Math.abs)), 'the logits are not all near zero').toBeGreaterThan(0.5);
    });
  }

  it('the sharded Qwen3 checkpoint holds the same weights as the single file', () => {
    const single = loadModelFile(join(fixtures, 'hf-qwen3'));
    const sharded = loadModelFile(join(fixtures, 'hf-qwen3-sharded', 'model.safetensors.index.json'));
    expect(sharded.config).toEqual(single.config);
    expect(sharded.tensors).toEqual(single.tensors);
    expect(serializeSafetensors(sharded.tensors)).toEqual(serializeSafetensors(single.tensors));
  });
});
