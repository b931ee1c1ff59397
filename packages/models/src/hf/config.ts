import { CONFIG_LIMITS, type ConfigSize, validateConfig } from '@loom/nn';
import type { ModelConfig } from '../config';
import {
  describeJson,
  type JsonObject,
  readBoolean,
  readChoice,
  readInteger,
  readObject,
  readPositiveNumber,
} from '../json';

/** Hugging Face `transformers` defaults for keys a config.json may leave out. */
const LLAMA_DEFAULT_RMS_NORM_EPS = 1e-6;
const LLAMA_DEFAULT_ROPE_THETA = 10000;
const GPT2_DEFAULT_LAYER_NORM_EPS = 1e-5;
/** GPT-2 has learned positions; the config still carries a theta, unused. */
const GPT2_UNUSED_ROPE_THETA = 10000;

const SUPPORTED = 'LlamaForCausalLM (model_type "llama") or GPT2LMHeadModel (model_type "gpt2")';

function architectureOf(json: JsonObject, source: string): ModelConfig['preset'] {
  const architectures = Array.isArray(json.architectures) ? json.architectures : [];
  if (architectures.includes('LlamaForCausalLM') || json.model_type === 'llama') return 'llama';
  if (architectures.includes('GPT2LMHeadModel') || json.model_type === 'gpt2') return 'gpt2';
  throw new Error(
    `${source}: architectures ${describeJson(json.architectures)} and model_type ${describeJson(json.model_type)} name no model Loom loads; expected ${SUPPORTED}`,
  );
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function refuse(source: string, key: string, found: unknown, why: string): never {
  throw new Error(`${source}: key "${key}" is ${describeJson(found)}; ${why}`);
}

/** Reads the integer `key`, a Loom `size`, within Loom's limit for it. */
function sizeReader(json: JsonObject, source: string) {
  return (key: string, size: ConfigSize) => readInteger(json[key], source, key, 1, CONFIG_LIMITS[size]);
}

function llamaConfig(json: JsonObject, source: string): ModelConfig {
  const int = sizeReader(json, source);
  const numHeads = int('num_attention_heads', 'numHeads');
  const dim = int('hidden_size', 'dim');
  if (!absent(json.rope_scaling)) {
    refuse(
      source,
      'rope_scaling',
      json.rope_scaling,
      'Loom implements plain RoPE only — use a model without it',
    );
  }
  if (!absent(json.hidden_act) && json.hidden_act !== 'silu') {
    refuse(
      source,
      'hidden_act',
      json.hidden_act,
      'expected "silu" (SwiGLU), the only Llama activation Loom has',
    );
  }
  for (const key of ['attention_bias', 'mlp_bias']) {
    if (json[key] === true) refuse(source, key, true, 'Loom’s llama preset has no biases');
  }
  if (!absent(json.head_dim) && json.head_dim !== dim / numHeads) {
    refuse(
      source,
      'head_dim',
      json.head_dim,
      `Loom needs head_dim = hidden_size / num_attention_heads = ${dim / numHeads}`,
    );
  }
  return {
    preset: 'llama',
    vocabSize: int('vocab_size', 'vocabSize'),
    dim,
    numLayers: int('num_hidden_layers', 'numLayers'),
    numHeads,
    numKvHeads: absent(json.num_key_value_heads) ? numHeads : int('num_key_value_heads', 'numKvHeads'),
    hiddenDim: int('intermediate_size', 'hiddenDim'),
    maxSeqLen: int('max_position_embeddings', 'maxSeqLen'),
    normEps: absent(json.rms_norm_eps)
      ? LLAMA_DEFAULT_RMS_NORM_EPS
      : readPositiveNumber(json.rms_norm_eps, source, 'rms_norm_eps'),
    ropeTheta: absent(json.rope_theta)
      ? LLAMA_DEFAULT_ROPE_THETA
      : readPositiveNumber(json.rope_theta, source, 'rope_theta'),
    tiedEmbeddings: absent(json.tie_word_embeddings)
      ? false
      : readBoolean(json.tie_word_embeddings, source, 'tie_word_embeddings'),
    bias: false,
  };
}

function gpt2Config(json: JsonObject, source: string): ModelConfig {
  const int = sizeReader(json, source);
  const dim = int('n_embd', 'dim');
  const numHeads = int('n_head', 'numHeads');
  if (!absent(json.activation_function)) {
    readChoice(json.activation_function, ['gelu_new', 'gelu_pytorch_tanh'], source, 'activation_function');
  }
  return {
    preset: 'gpt2',
    vocabSize: int('vocab_size', 'vocabSize'),
    dim,
    numLayers: int('n_layer', 'numLayers'),
    numHeads,
    numKvHeads: numHeads,
    hiddenDim: absent(json.n_inner) ? 4 * dim : int('n_inner', 'hiddenDim'),
    maxSeqLen: int('n_positions', 'maxSeqLen'),
    normEps: absent(json.layer_norm_epsilon)
      ? GPT2_DEFAULT_LAYER_NORM_EPS
      : readPositiveNumber(json.layer_norm_epsilon, source, 'layer_norm_epsilon'),
    ropeTheta: GPT2_UNUSED_ROPE_THETA,
    tiedEmbeddings: absent(json.tie_word_embeddings)
      ? true
      : readBoolean(json.tie_word_embeddings, source, 'tie_word_embeddings'),
    bias: true,
  };
}

/**
 * Reads a Hugging Face `config.json` of a Llama-architecture (`LlamaForCausalLM`) or GPT-2 (`GPT2LMHeadModel`)
 * model into a ModelConfig. Keys `transformers` lets a config leave out get its defaults (num_key_value_heads =
 * num_attention_heads, rms_norm_eps 1e-6, rope_theta 10000, untied Llama embeddings; GPT-2 n_inner = 4·n_embd,
 * layer_norm_epsilon 1e-5, tied); features Loom does not implement (rope_scaling, biases in Llama, other
 * activations) are refused by name.
 */
export function parseHfConfig(json: unknown, source = 'config.json'): ModelConfig {
  const object = readObject(json, source, '(top level)');
  const preset = architectureOf(object, source);
  const config = preset === 'llama' ? llamaConfig(object, source) : gpt2Config(object, source);
  validateConfig(config, source);
  return config;
}

/** A Hugging Face `config.json` object for a model, as `parseHfConfig` reads it back. */
export function toHfConfig(config: ModelConfig): Record<string, unknown> {
  validateConfig(config, 'toHfConfig');
  if (config.preset === 'llama') {
    if (config.bias)
      throw new Error('toHfConfig: a Hugging Face Llama has no biases; this llama model has them');
    return {
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: config.dim,
      intermediate_size: config.hiddenDim,
      num_hidden_layers: config.numLayers,
      num_attention_heads: config.numHeads,
      num_key_value_heads: config.numKvHeads,
      vocab_size: config.vocabSize,
      max_position_embeddings: config.maxSeqLen,
      rms_norm_eps: config.normEps,
      rope_theta: config.ropeTheta,
      tie_word_embeddings: config.tiedEmbeddings,
      hidden_act: 'silu',
      torch_dtype: 'float32',
    };
  }
  if (!config.bias) throw new Error('toHfConfig: a Hugging Face GPT-2 has biases; this gpt2 model has none');
  if (config.numKvHeads !== config.numHeads) {
    throw new Error(
      `toHfConfig: a Hugging Face GPT-2 has no grouped-query attention; this gpt2 model has numKvHeads=${config.numKvHeads} for numHeads=${config.numHeads}`,
    );
  }
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    n_embd: config.dim,
    n_layer: config.numLayers,
    n_head: config.numHeads,
    n_inner: config.hiddenDim,
    n_positions: config.maxSeqLen,
    vocab_size: config.vocabSize,
    layer_norm_epsilon: config.normEps,
    activation_function: 'gelu_new',
    tie_word_embeddings: config.tiedEmbeddings,
    torch_dtype: 'float32',
  };
}
