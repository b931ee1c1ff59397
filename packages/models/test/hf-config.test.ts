import { describe, expect, it } from 'vitest';
import { parseHfConfig, toHfConfig } from '../src/index';
import { errorOf, tinyGpt2, tinyLlama } from './helpers';

/** Keys as in TinyLlama-1.1B's config.json. */
const llamaJson = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  bos_token_id: 1,
  eos_token_id: 2,
  hidden_act: 'silu',
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: 5632,
  max_position_embeddings: 2048,
  model_type: 'llama',
  num_attention_heads: 32,
  num_hidden_layers: 22,
  num_key_value_heads: 4,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 10000.0,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  use_cache: true,
  vocab_size: 32000,
};

/** Keys as in GPT-2 small's config.json. */
const gpt2Json = {
  activation_function: 'gelu_new',
  architectures: ['GPT2LMHeadModel'],
  attn_pdrop: 0.1,
  bos_token_id: 50256,
  embd_pdrop: 0.1,
  eos_token_id: 50256,
  initializer_range: 0.02,
  layer_norm_epsilon: 1e-5,
  model_type: 'gpt2',
  n_ctx: 1024,
  n_embd: 768,
  n_head: 12,
  n_layer: 12,
  n_positions: 1024,
  resid_pdrop: 0.1,
  vocab_size: 50257,
};

describe('Hugging Face config.json', () => {
  it('reads a Llama config', () => {
    expect(parseHfConfig(llamaJson)).toEqual({
      preset: 'llama',
      vocabSize: 32000,
      dim: 2048,
      numLayers: 22,
      numHeads: 32,
      numKvHeads: 4,
      hiddenDim: 5632,
      maxSeqLen: 2048,
      normEps: 1e-5,
      ropeTheta: 10000,
      tiedEmbeddings: false,
      bias: false,
    });
  });

  it('applies the transformers defaults to keys a Llama config leaves out', () => {
    const {
      num_key_value_heads: _kv,
      rope_theta: _theta,
      rms_norm_eps: _eps,
      tie_word_embeddings: _tie,
      ...bare
    } = llamaJson;
    const config = parseHfConfig(bare);
    expect(config.numKvHeads).toBe(32);
    expect(config.ropeTheta).toBe(10000);
    expect(config.normEps).toBe(1e-6);
    expect(config.tiedEmbeddings).toBe(false);
    expect(parseHfConfig({ ...bare, architectures: undefined }).preset).toBe('llama');
  });

  it('reads a GPT-2 config', () => {
    expect(parseHfConfig(gpt2Json)).toEqual({
      preset: 'gpt2',
      vocabSize: 50257,
      dim: 768,
      numLayers: 12,
      numHeads: 12,
      numKvHeads: 12,
      hiddenDim: 3072,
      maxSeqLen: 1024,
      normEps: 1e-5,
      ropeTheta: 10000,
      tiedEmbeddings: true,
      bias: true,
    });
    expect(parseHfConfig({ ...gpt2Json, n_inner: 1000 }).hiddenDim).toBe(1000);
  });

  it('names the file, the key, what was expected and what was found', () => {
    const { hidden_size: _hidden, ...noHidden } = llamaJson;
    expect(errorOf(() => parseHfConfig(noHidden, 'tiny/config.json'))).toBe(
      'tiny/config.json: key "hidden_size": expected an integer from 1 to 65536, found nothing',
    );
    expect(errorOf(() => parseHfConfig({ ...gpt2Json, n_head: '12' }, 'c.json'))).toBe(
      'c.json: key "n_head": expected an integer from 1 to 65536, found "12"',
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, rms_norm_eps: -1 }, 'c.json'))).toBe(
      'c.json: key "rms_norm_eps": expected a positive number, found -1',
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, tie_word_embeddings: 'no' }, 'c.json'))).toMatch(
      /key "tie_word_embeddings": expected true or false, found "no"/,
    );
    expect(
      errorOf(() => parseHfConfig({ architectures: ['PhiForCausalLM'], model_type: 'phi' }, 'c.json')),
    ).toBe(
      'c.json: architectures ["PhiForCausalLM"] and model_type "phi" name no model Loom loads; expected LlamaForCausalLM (model_type "llama"), MistralForCausalLM (model_type "mistral"), MixtralForCausalLM (model_type "mixtral"), Qwen2ForCausalLM (model_type "qwen2"), Qwen3ForCausalLM (model_type "qwen3") or GPT2LMHeadModel (model_type "gpt2")',
    );
    expect(errorOf(() => parseHfConfig([1], 'c.json'))).toMatch(/key "\(top level\)": expected an object/);
  });

  it('refuses features Loom does not implement', () => {
    const scaled = { ...llamaJson, rope_scaling: { rope_type: 'longrope', factor: 8 } };
    expect(errorOf(() => parseHfConfig(scaled, 'c.json'))).toMatch(
      /^c\.json: key "rope_scaling.rope_type" is "longrope"; Loom implements "linear", "dynamic", "yarn", "llama3"/,
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, attention_bias: true }, 'c.json'))).toMatch(
      /key "attention_bias" is true; it puts a bias on o_proj too, which Loom does not have/,
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, hidden_act: 'gelu' }, 'c.json'))).toMatch(
      /expected "silu"/,
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, mlp_bias: true }, 'c.json'))).toMatch(
      /key "mlp_bias" is true; Loom’s feed-forward layers have no biases/,
    );
    expect(errorOf(() => parseHfConfig({ ...gpt2Json, activation_function: 'relu' }, 'c.json'))).toMatch(
      /key "activation_function": expected one of "gelu_new", "gelu_pytorch_tanh", found "relu"/,
    );
    expect(errorOf(() => parseHfConfig({ ...llamaJson, num_key_value_heads: 5 }, 'c.json'))).toBe(
      'c.json: invalid model config: numHeads=32 must be a multiple of numKvHeads=5',
    );
  });

  it('writes configs that read back the same', () => {
    for (const config of [tinyLlama, { ...tinyLlama, tiedEmbeddings: false }, tinyGpt2]) {
      expect(parseHfConfig(JSON.parse(JSON.stringify(toHfConfig(config))))).toEqual(config);
    }
    expect(errorOf(() => toHfConfig({ ...tinyGpt2, bias: false }))).toMatch(/GPT-2 has biases/);
    expect(errorOf(() => toHfConfig({ ...tinyGpt2, numKvHeads: 1 }))).toMatch(
      /GPT-2 has no grouped-query attention/,
    );
  });
});
