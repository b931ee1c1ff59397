import { headDim } from '@loom/nn';
import { showShape } from '@loom/tensor';
import type { ModelConfig } from '../config';
import type { NamedTensor, StoredTensor } from '../tensor';
import { hfToLoomRotary, loomToHfRotary } from './rotary';

/**
 * Hugging Face Llama, Qwen2 and Qwen3 per-layer names (after `model.layers.{i}.`) and their Loom names (after
 * `layers.{i}.`): Qwen2 adds the q/k/v biases, Qwen3 the per-head q/k norms.
 */
const LAYER_NAMES: readonly (readonly [hf: string, loom: string])[] = [
  ['input_layernorm.weight', 'attention_norm.weight'],
  ['self_attn.q_proj.weight', 'attention.wq.weight'],
  ['self_attn.q_proj.bias', 'attention.wq.bias'],
  ['self_attn.k_proj.weight', 'attention.wk.weight'],
  ['self_attn.k_proj.bias', 'attention.wk.bias'],
  ['self_attn.v_proj.weight', 'attention.wv.weight'],
  ['self_attn.v_proj.bias', 'attention.wv.bias'],
  ['self_attn.o_proj.weight', 'attention.wo.weight'],
  ['self_attn.q_norm.weight', 'attention.q_norm.weight'],
  ['self_attn.k_norm.weight', 'attention.k_norm.weight'],
  ['post_attention_layernorm.weight', 'ffn_norm.weight'],
  ['mlp.gate_proj.weight', 'feed_forward.w1.weight'],
  ['mlp.down_proj.weight', 'feed_forward.w2.weight'],
  ['mlp.up_proj.weight', 'feed_forward.w3.weight'],
  ['block_sparse_moe.gate.weight', 'feed_forward.gate.weight'],
];

/** Mixtral's experts: `block_sparse_moe.experts.{e}.w1/w2/w3` (gate, down, up) are Loom's `feed_forward.experts.{e}.…`. */
const HF_EXPERT = /^block_sparse_moe\.experts\.(\d+)\.(w[123]\.weight)$/;
const LOOM_EXPERT = /^feed_forward\.experts\.(\d+)\.(w[123]\.weight)$/;

/** The per-layer Loom suffix of a Hugging Face suffix, or undefined for a name Loom does not know. */
function loomSuffixOf(hfSuffix: string): string | undefined {
  const expert = HF_EXPERT.exec(hfSuffix);
  if (expert !== null) return `feed_forward.experts.${expert[1]}.${expert[2]}`;
  return LAYER_NAMES.find(([hf]) => hf === hfSuffix)?.[1];
}

/** The per-layer Hugging Face suffix of a (validated) Loom suffix. */
function hfSuffixOf(loomSuffix: string): string {
  const expert = LOOM_EXPERT.exec(loomSuffix);
  if (expert !== null) return `block_sparse_moe.experts.${expert[1]}.${expert[2]}`;
  return LAYER_NAMES.find(([, loom]) => loom === loomSuffix)![0];
}

const TOP_NAMES: readonly (readonly [hf: string, loom: string])[] = [
  ['model.embed_tokens.weight', 'tok_embeddings.weight'],
  ['model.norm.weight', 'norm.weight'],
  ['lm_head.weight', 'output.weight'],
];

/** Buffers some older checkpoints saved; recomputed by every implementation, so dropped. */
const IGNORED_LAYER_BUFFER = 'self_attn.rotary_emb.inv_freq';

const HF_LAYER = /^model\.layers\.(\d+)\.(.+)$/;
const LOOM_LAYER = /^layers\.(\d+)\.(.+)$/;

/**
 * How a per-layer tensor is laid out along the rotated head axis: `heads` blocks of headDim rows (of `shape`),
 * which RoPE's layout difference permutes. The q/k projections and their biases are split into heads; a q/k norm
 * weight is one head's worth, so its elements move as a single head's rows do.
 */
function rotaryLayout(
  config: ModelConfig,
  loomSuffix: string,
): { heads: number; shape: readonly number[] } | undefined {
  const hd = headDim(config);
  const heads = (count: number, shape: readonly number[]) => ({ heads: count, shape });
  switch (loomSuffix) {
    case 'attention.wq.weight':
      return heads(config.numHeads, [config.numHeads * hd, config.dim]);
    case 'attention.wk.weight':
      return heads(config.numKvHeads, [config.numKvHeads * hd, config.dim]);
    case 'attention.wq.bias':
      return heads(config.numHeads, [config.numHeads * hd]);
    case 'attention.wk.bias':
      return heads(config.numKvHeads, [config.numKvHeads * hd]);
    case 'attention.q_norm.weight':
    case 'attention.k_norm.weight':
      return heads(1, [hd]);
    default:
      return undefined;
  }
}

/**
 * A Hugging Face Llama/Qwen tensor under its Loom name, q/k rows (and q/k biases and norm weights) un-permuted
 * into Loom's interleaved RoPE layout. Returns [] for dropped buffers and the tensor unchanged for names it does
 * not know or shapes that do not fit (validation reports those).
 */
export function llamaFromHf(config: ModelConfig, tensor: StoredTensor): StoredTensor[] {
  const top = TOP_NAMES.find(([hf]) => hf === tensor.name);
  if (top !== undefined) return [{ ...tensor, name: top[1] }];
  const match = HF_LAYER.exec(tensor.name);
  if (match === null) return [tensor];
  const [, layer, hfSuffix] = match;
  if (hfSuffix === IGNORED_LAYER_BUFFER) return [];
  const loomSuffix = loomSuffixOf(hfSuffix);
  if (loomSuffix === undefined) return [tensor];
  const name = `layers.${layer}.${loomSuffix}`;
  const layout = rotaryLayout(config, loomSuffix);
  if (
    layout === undefined ||
    tensor.data instanceof Int32Array ||
    showShape(tensor.shape) !== showShape(layout.shape)
  ) {
    return [{ ...tensor, name }];
  }
  return [{ name, shape: tensor.shape, data: hfToLoomRotary(tensor.data, layout.heads, headDim(config)) }];
}

/** A validated Loom llama tensor under its Hugging Face name, q/k rows (biases, norms) permuted for rotate-half RoPE. */
export function llamaToHf(config: ModelConfig, tensor: NamedTensor): NamedTensor {
  const top = TOP_NAMES.find(([, loom]) => loom === tensor.name);
  if (top !== undefined) return { ...tensor, name: top[0] };
  const [, layer, loomSuffix] = LOOM_LAYER.exec(tensor.name)!;
  const name = `model.layers.${layer}.${hfSuffixOf(loomSuffix)}`;
  const layout = rotaryLayout(config, loomSuffix);
  if (layout === undefined) return { ...tensor, name };
  return { name, shape: tensor.shape, data: loomToHfRotary(tensor.data, layout.heads, headDim(config)) };
}
