import { headDim } from '@loom/nn';
import { showShape } from '@loom/tensor';
import type { ModelConfig } from '../config';
import type { NamedTensor, StoredTensor } from '../tensor';
import { hfToLoomRotary, loomToHfRotary } from './rotary';

/** Hugging Face Llama per-layer names (after `model.layers.{i}.`) and their Loom names (after `layers.{i}.`). */
const LAYER_NAMES: readonly (readonly [hf: string, loom: string])[] = [
  ['input_layernorm.weight', 'attention_norm.weight'],
  ['self_attn.q_proj.weight', 'attention.wq.weight'],
  ['self_attn.k_proj.weight', 'attention.wk.weight'],
  ['self_attn.v_proj.weight', 'attention.wv.weight'],
  ['self_attn.o_proj.weight', 'attention.wo.weight'],
  ['post_attention_layernorm.weight', 'ffn_norm.weight'],
  ['mlp.gate_proj.weight', 'feed_forward.w1.weight'],
  ['mlp.down_proj.weight', 'feed_forward.w2.weight'],
  ['mlp.up_proj.weight', 'feed_forward.w3.weight'],
];

const TOP_NAMES: readonly (readonly [hf: string, loom: string])[] = [
  ['model.embed_tokens.weight', 'tok_embeddings.weight'],
  ['model.norm.weight', 'norm.weight'],
  ['lm_head.weight', 'output.weight'],
];

/** Buffers some older checkpoints saved; recomputed by every implementation, so dropped. */
const IGNORED_LAYER_BUFFER = 'self_attn.rotary_emb.inv_freq';

const HF_LAYER = /^model\.layers\.(\d+)\.(.+)$/;
const LOOM_LAYER = /^layers\.(\d+)\.(.+)$/;

/** The heads whose rows are permuted for this Loom per-layer name, if any. */
function rotaryHeads(config: ModelConfig, loomSuffix: string): number | undefined {
  if (loomSuffix === 'attention.wq.weight') return config.numHeads;
  if (loomSuffix === 'attention.wk.weight') return config.numKvHeads;
  return undefined;
}

/**
 * A Hugging Face Llama tensor under its Loom name, q/k rows un-permuted into Loom's interleaved RoPE layout.
 * Returns [] for dropped buffers and the tensor unchanged for names it does not know (validation reports those).
 */
export function llamaFromHf(config: ModelConfig, tensor: StoredTensor): StoredTensor[] {
  const top = TOP_NAMES.find(([hf]) => hf === tensor.name);
  if (top !== undefined) return [{ ...tensor, name: top[1] }];
  const match = HF_LAYER.exec(tensor.name);
  if (match === null) return [tensor];
  const [, layer, hfSuffix] = match;
  if (hfSuffix === IGNORED_LAYER_BUFFER) return [];
  const entry = LAYER_NAMES.find(([hf]) => hf === hfSuffix);
  if (entry === undefined) return [tensor];
  const name = `layers.${layer}.${entry[1]}`;
  const heads = rotaryHeads(config, entry[1]);
  const rows = heads === undefined ? 0 : heads * headDim(config);
  if (
    heads === undefined ||
    tensor.data instanceof Int32Array ||
    showShape(tensor.shape) !== showShape([rows, config.dim])
  ) {
    return [{ ...tensor, name }];
  }
  return [{ name, shape: tensor.shape, data: hfToLoomRotary(tensor.data, heads, headDim(config)) }];
}

/** A validated Loom llama tensor under its Hugging Face name, q/k rows permuted for rotate-half RoPE. */
export function llamaToHf(config: ModelConfig, tensor: NamedTensor): NamedTensor {
  const top = TOP_NAMES.find(([, loom]) => loom === tensor.name);
  if (top !== undefined) return { ...tensor, name: top[0] };
  const [, layer, loomSuffix] = LOOM_LAYER.exec(tensor.name)!;
  const [hfSuffix] = LAYER_NAMES.find(([, loom]) => loom === loomSuffix)!;
  const name = `model.layers.${layer}.${hfSuffix}`;
  const heads = rotaryHeads(config, loomSuffix);
  if (heads === undefined) return { ...tensor, name };
  return { name, shape: tensor.shape, data: loomToHfRotary(tensor.data, heads, headDim(config)) };
}
