import { CONFIG_LIMITS, type ConfigSize, headDim, type MoeConfig, validateConfig } from '@loom/nn';
import {
  describeJson,
  type JsonObject,
  readArray,
  readBoolean,
  readChoice,
  readInteger,
  readNumber,
  readObject,
  readPositiveNumber,
} from '@loom/tokenizer';
import type { ModelConfig } from '../config';
import { hfRopeScaling, readHfRopeScaling } from '../rope-scaling-json';

/** Hugging Face `transformers` defaults for keys a config.json may leave out. */
const LLAMA_DEFAULT_RMS_NORM_EPS = 1e-6;
const LLAMA_DEFAULT_ROPE_THETA = 10000;
/** `Qwen3Config`'s head_dim when a config.json leaves it out (Llama and Qwen2 use hidden_size / heads). */
const QWEN3_DEFAULT_HEAD_DIM = 128;
const GPT2_DEFAULT_LAYER_NORM_EPS = 1e-5;
/** `MixtralConfig`'s defaults for the expert keys. */
const MIXTRAL_DEFAULT_EXPERTS = 8;
const MIXTRAL_DEFAULT_EXPERTS_PER_TOKEN = 2;
const MIXTRAL_DEFAULT_ROUTER_AUX_LOSS_COEF = 0.001;
/** GPT-2 has learned positions; the config still carries a theta, unused. */
const GPT2_UNUSED_ROPE_THETA = 10000;

/** The Hugging Face architectures Loom reads: Llama-family decoders (RMSNorm, RoPE, SwiGLU) and GPT-2. */
type HfArchitecture = 'llama' | 'mistral' | 'mixtral' | 'qwen2' | 'qwen3' | 'gpt2';

/** Each architecture's class name in `architectures` and its `model_type`. */
const ARCHITECTURES: readonly (readonly [architecture: HfArchitecture, className: string])[] = [
  ['llama', 'LlamaForCausalLM'],
  ['mistral', 'MistralForCausalLM'],
  ['mixtral', 'MixtralForCausalLM'],
  ['qwen2', 'Qwen2ForCausalLM'],
  ['qwen3', 'Qwen3ForCausalLM'],
  ['gpt2', 'GPT2LMHeadModel'],
];

const NAMED = ARCHITECTURES.map(([type, name]) => `${name} (model_type "${type}")`);
const SUPPORTED = `${NAMED.slice(0, -1).join(', ')} or ${NAMED.at(-1)}`;

function architectureOf(json: JsonObject, source: string): HfArchitecture {
  const architectures = Array.isArray(json.architectures) ? json.architectures : [];
  const named = ARCHITECTURES.find(([, className]) => architectures.includes(className));
  if (named !== undefined) return named[0];
  const typed = ARCHITECTURES.find(([type]) => json.model_type === type);
  if (typed !== undefined) return typed[0];
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

/**
 * Qwen's sliding-window attention, refused when switched on (Loom attends to the whole context): the
 * `use_sliding_window` flag, or a `layer_types` list naming a layer other than "full_attention". The window keys
 * themselves (`sliding_window`, `max_window_layers`) are read for their type only: they act only when it is on.
 */
function refuseSlidingWindow(json: JsonObject, source: string): void {
  if (
    !absent(json.use_sliding_window) &&
    readBoolean(json.use_sliding_window, source, 'use_sliding_window')
  ) {
    refuse(
      source,
      'use_sliding_window',
      true,
      'Loom has no sliding-window attention yet — use a model (or a config) with use_sliding_window false',
    );
  }
  if (!absent(json.max_window_layers)) readInteger(json.max_window_layers, source, 'max_window_layers', 0);
  if (!absent(json.sliding_window)) readInteger(json.sliding_window, source, 'sliding_window', 0);
  if (!absent(json.layer_types)) {
    const types = readArray(json.layer_types, source, 'layer_types');
    const other = types.findIndex((type) => type !== 'full_attention');
    if (other >= 0) {
      refuse(
        source,
        `layer_types[${other}]`,
        types[other],
        'Loom has full attention only ("full_attention"); sliding-window layers are not implemented',
      );
    }
  }
}

/** The per-head width a config states: `head_dim`, else the architecture's default. */
function headDimOf(
  json: JsonObject,
  source: string,
  architecture: HfArchitecture,
  dim: number,
  heads: number,
) {
  if (!absent(json.head_dim))
    return readInteger(json.head_dim, source, 'head_dim', 1, CONFIG_LIMITS.hiddenDim);
  return architecture === 'qwen3' ? QWEN3_DEFAULT_HEAD_DIM : dim / heads;
}

/**
 * A Llama, Mistral, Qwen2 or Qwen3 config.json: RMSNorm, RoPE and SwiGLU, with each architecture's attention
 * (Mistral's `sliding_window`, null for full attention, becomes `slidingWindow`).
 */
function llamaFamilyConfig(json: JsonObject, source: string, architecture: HfArchitecture): ModelConfig {
  const int = sizeReader(json, source);
  const numHeads = int('num_attention_heads', 'numHeads');
  const dim = int('hidden_size', 'dim');
  if (!absent(json.partial_rotary_factor) && json.partial_rotary_factor !== 1) {
    refuse(source, 'partial_rotary_factor', json.partial_rotary_factor, 'Loom rotates the whole head (1.0)');
  }
  const ropeScaling = readHfRopeScaling(json.rope_scaling, source);
  if (!absent(json.hidden_act) && json.hidden_act !== 'silu') {
    refuse(
      source,
      'hidden_act',
      json.hidden_act,
      'expected "silu" (SwiGLU), the only Llama activation Loom has',
    );
  }
  if (json.mlp_bias === true) refuse(source, 'mlp_bias', true, 'Loom’s feed-forward layers have no biases');
  if (json.attention_bias === true && architecture !== 'qwen2') {
    refuse(
      source,
      'attention_bias',
      true,
      'it puts a bias on o_proj too, which Loom does not have (Loom has q/k/v biases, as Qwen2 does)',
    );
  }
  if (architecture === 'qwen2' || architecture === 'qwen3') refuseSlidingWindow(json, source);
  const slidingWindow =
    (architecture === 'mistral' || architecture === 'mixtral') && !absent(json.sliding_window)
      ? readInteger(json.sliding_window, source, 'sliding_window', 1, CONFIG_LIMITS.maxSeqLen)
      : undefined;
  const headDim = headDimOf(json, source, architecture, dim, numHeads);
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
    ...(ropeScaling === undefined ? {} : { ropeScaling }),
    tiedEmbeddings: absent(json.tie_word_embeddings)
      ? false
      : readBoolean(json.tie_word_embeddings, source, 'tie_word_embeddings'),
    bias: false,
    ...(headDim === dim / numHeads ? {} : { headDim }),
    ...(architecture === 'qwen2' ? { qkvBias: true } : {}),
    ...(architecture === 'qwen3' ? { qkNorm: true } : {}),
    ...(slidingWindow === undefined ? {} : { slidingWindow }),
    ...(architecture === 'mixtral' ? { moe: mixtralMoe(json, source) } : {}),
  };
}

/**
 * Mixtral's experts: `num_local_experts`, `num_experts_per_tok` and `router_aux_loss_coef` (transformers' defaults
 * 8, 2 and 0.001 when absent). Mixtral never drops a token, so the capacity factor is experts / topK (each expert
 * may take every token; a decode step still computes one row per expert).
 */
function mixtralMoe(json: JsonObject, source: string): MoeConfig {
  const experts = absent(json.num_local_experts)
    ? MIXTRAL_DEFAULT_EXPERTS
    : readInteger(json.num_local_experts, source, 'num_local_experts', 1);
  const topK = absent(json.num_experts_per_tok)
    ? MIXTRAL_DEFAULT_EXPERTS_PER_TOKEN
    : readInteger(json.num_experts_per_tok, source, 'num_experts_per_tok', 1, experts);
  const auxLossCoef = absent(json.router_aux_loss_coef)
    ? MIXTRAL_DEFAULT_ROUTER_AUX_LOSS_COEF
    : readNumber(json.router_aux_loss_coef, source, 'router_aux_loss_coef');
  return { experts, topK, auxLossCoef, capacityFactor: experts / topK };
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
 * Reads a Hugging Face `config.json` of a Llama (`LlamaForCausalLM`), Mistral (`MistralForCausalLM`: sliding window), Qwen2 (`Qwen2ForCausalLM`: q/k/v biases),
 * Qwen3 (`Qwen3ForCausalLM`: per-head q/k RMSNorm, explicit head_dim) or GPT-2 (`GPT2LMHeadModel`) model into a
 * ModelConfig. Keys `transformers` lets a config leave out get its defaults (num_key_value_heads =
 * num_attention_heads, rms_norm_eps 1e-6, rope_theta 10000, untied embeddings, head_dim hidden_size / heads or
 * 128 for Qwen3; GPT-2 n_inner = 4·n_embd, layer_norm_epsilon 1e-5, tied); features Loom does not implement
 * (rope_scaling types other than linear, dynamic, yarn and llama3, Qwen's per-layer sliding windows, biases other than Qwen2's, other
 * activations) are refused by name.
 */
export function parseHfConfig(json: unknown, source = 'config.json'): ModelConfig {
  const object = readObject(json, source, '(top level)');
  const architecture = architectureOf(object, source);
  const config =
    architecture === 'gpt2' ? gpt2Config(object, source) : llamaFamilyConfig(object, source, architecture);
  validateConfig(config, source);
  return config;
}

/** The Hugging Face architecture of a llama-preset model: Qwen3 with q/k norms, Qwen2 with q/k/v biases, else Llama. */
function llamaFamilyHfConfig(config: ModelConfig): Record<string, unknown> {
  if (config.bias)
    throw new Error('toHfConfig: a Hugging Face Llama has no biases; this llama model has them');
  if (config.qkNorm === true && config.qkvBias === true) {
    throw new Error(
      'toHfConfig: no Hugging Face architecture has q/k norms and q/k/v biases without an o_proj bias (Qwen3 with attention_bias biases o_proj too); this model has both',
    );
  }
  const qwen3 = config.qkNorm === true;
  const windowed = config.slidingWindow !== undefined;
  const moe = config.moe;
  if (moe !== undefined && (qwen3 || config.qkvBias === true)) {
    throw new Error(
      `toHfConfig: experts are written as Mixtral's, and a Mixtral has no ${qwen3 ? 'q/k norms' : 'q/k/v biases'}; this model has both`,
    );
  }
  if (windowed && (qwen3 || config.qkvBias === true)) {
    throw new Error(
      `toHfConfig: a sliding window is written as Mistral's sliding_window, and a Mistral has no ${qwen3 ? 'q/k norms' : 'q/k/v biases'}; this model has both`,
    );
  }
  const architecture: HfArchitecture = qwen3
    ? 'qwen3'
    : config.qkvBias
      ? 'qwen2'
      : moe !== undefined
        ? 'mixtral'
        : windowed
          ? 'mistral'
          : 'llama';
  const className = ARCHITECTURES.find(([type]) => type === architecture)![1];
  const hd = headDim(config);
  return {
    architectures: [className],
    model_type: architecture,
    hidden_size: config.dim,
    intermediate_size: config.hiddenDim,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    ...(architecture === 'qwen3' || hd !== config.dim / config.numHeads ? { head_dim: hd } : {}),
    vocab_size: config.vocabSize,
    max_position_embeddings: config.maxSeqLen,
    rms_norm_eps: config.normEps,
    rope_theta: config.ropeTheta,
    ...(config.ropeScaling === undefined ? {} : { rope_scaling: hfRopeScaling(config.ropeScaling) }),
    tie_word_embeddings: config.tiedEmbeddings,
    hidden_act: 'silu',
    ...(architecture === 'qwen3' ? { attention_bias: false } : {}),
    ...(architecture === 'qwen2' || architecture === 'qwen3' ? { use_sliding_window: false } : {}),
    ...(windowed ? { sliding_window: config.slidingWindow } : {}),
    ...(moe === undefined
      ? {}
      : {
          num_local_experts: moe.experts,
          num_experts_per_tok: moe.topK,
          router_aux_loss_coef: moe.auxLossCoef ?? MIXTRAL_DEFAULT_ROUTER_AUX_LOSS_COEF,
        }),
    torch_dtype: 'float32',
  };
}

/**
 * A Hugging Face `config.json` object for a model, as `parseHfConfig` reads it back: a llama-preset model becomes
 * Qwen3ForCausalLM when it has q/k norms, Qwen2ForCausalLM when it has q/k/v biases, MistralForCausalLM when it has
 * a sliding window, else LlamaForCausalLM.
 */
export function toHfConfig(config: ModelConfig): Record<string, unknown> {
  validateConfig(config, 'toHfConfig');
  if (config.preset === 'llama') return llamaFamilyHfConfig(config);
  if (config.headDim !== undefined && config.headDim !== config.dim / config.numHeads) {
    throw new Error(
      `toHfConfig: a Hugging Face GPT-2 has head width n_embd / n_head = ${config.dim / config.numHeads}; this gpt2 model has headDim=${config.headDim}`,
    );
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
