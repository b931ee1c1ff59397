import { compare, full, matmul, scope, type Tensor, tensor, where } from '@loom/tensor';
import { headDim } from './config';
import type { TransformerEncoder } from './encoder/encoder';
import { EncoderBlock } from './encoder/encoder-block';
import type { TransformerLM } from './transformer';

/** The models whose attention maps can be read: the decoder and the encoder share their blocks' attention. */
export type AttentionMapModel = TransformerLM | TransformerEncoder;

/** Which attention map to read. */
export interface AttentionMapOptions {
  /** The decoder block, from 0. */
  readonly layer: number;
  /** One query head, from 0; every head when absent. */
  readonly head?: number;
  /**
   * Which keys each query sees: 'causal' (a decoder's own mask) or 'none' (every key, as an encoder attends).
   * By default the model's own; giving the other compares the two on the same weights.
   */
  readonly mask?: 'causal' | 'none';
}

function checkInput(model: AttentionMapModel, tokens: readonly number[], options: AttentionMapOptions): void {
  const { vocabSize, maxSeqLen, numLayers, numHeads } = model.config;
  if (tokens.length === 0 || tokens.length > maxSeqLen) {
    throw new Error(
      `attentionMap: got ${tokens.length} tokens; give 1 to ${maxSeqLen} (the model's maxSeqLen), cutting older tokens off`,
    );
  }
  const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
  if (bad >= 0) {
    throw new Error(
      `attentionMap: token ${bad} is ${tokens[bad]}; ids must be integers in [0, ${vocabSize}) (the model's vocabulary)`,
    );
  }
  const { layer, head } = options;
  if (!Number.isInteger(layer) || layer < 0 || layer >= numLayers) {
    throw new Error(`attentionMap: layer is ${layer}; expected an integer in [0, ${numLayers}) (numLayers)`);
  }
  if (head !== undefined && (!Number.isInteger(head) || head < 0 || head >= numHeads)) {
    throw new Error(
      `attentionMap: head is ${head}; expected an integer in [0, ${numHeads}) (numHeads), or none for every head`,
    );
  }
  if (model.training && (model.options.dropout ?? 0) > 0) {
    throw new Error('attentionMap: the model is training with dropout; call model.eval() first');
  }
}

/** The input of block `layer`'s attention for ids [1, T]: the forward pass up to there. -> [1, T, dim]. */
function attentionInput(model: AttentionMapModel, ids: Tensor, layer: number): Tensor {
  const t = ids.shape[1];
  const { backend } = model;
  let x = model.tokEmbeddings.forward(ids); // [1, T, dim]
  if (model.posEmbeddings) {
    const positions = tensor(
      Int32Array.from({ length: t }, (_, i) => i),
      [t],
      { backend },
    ); // [T]
    x = x.add(model.posEmbeddings.forward(positions)); // [1, T, dim] + [T, dim]
  }
  for (const block of model.layers.slice(0, layer)) {
    x = block instanceof EncoderBlock ? block.forward(x) : block.forward(x, { offset: 0 });
  }
  const block = model.layers[layer];
  return block.placement === 'pre' ? block.attentionNorm.forward(x) : x;
}

/** softmax(q·kᵀ/√headDim + mask) of block `layer` for ids [1, T]. -> [H, T, T]. */
function probabilities(
  model: AttentionMapModel,
  ids: Tensor,
  layer: number,
  mask: 'causal' | 'none',
): Tensor {
  const { config, backend } = model;
  const { numHeads, numKvHeads } = config;
  const hd = headDim(config);
  const t = ids.shape[1];
  const group = numHeads / numKvHeads;
  const x = attentionInput(model, ids, layer);
  const attention = model.layers[layer].attention;
  const projected = attention.project(x); // q [1, T, H, hd], k [1, T, Hkv, hd]
  const q = attention.rotate(projected.q, 0); // [1, T, H, hd]
  const k = attention.rotate(projected.k, 0); // [1, T, Hkv, hd]
  // Query head h = kv * group + g reads kv head kv = floor(h / group), as the attention does.
  const qg = q
    .mul(1 / Math.sqrt(hd))
    .reshape([t, numKvHeads, group, hd]) // [T, Hkv, g, hd]
    .permute([1, 2, 0, 3]) // [Hkv, g, T, hd]
    .reshape([numKvHeads, group * t, hd]); // [Hkv, g*T, hd]
  const kh = k.reshape([t, numKvHeads, hd]).permute([1, 0, 2]); // [Hkv, T, hd]
  const scores = matmul(qg, kh, { transB: true }).reshape([numHeads, t, t]); // [H, T, T]
  if (mask === 'none') return scores.softmax(-1); // [H, T, T]
  const queryPos = tensor(
    Int32Array.from({ length: t }, (_, i) => i),
    [t, 1],
    { backend },
  ); // [T, 1]
  const keyPos = queryPos.reshape([1, t]); // [1, T]
  const causal = where(compare('le', keyPos, queryPos), full([], 0, { backend }), Number.NEGATIVE_INFINITY); // [T, T]
  const window = config.slidingWindow;
  if (window === undefined) return scores.add(causal).softmax(-1); // [H, T, T]
  // Sliding window: query i sees keys j with i - W < j ≤ i.
  const oldest = tensor(
    Int32Array.from({ length: t }, (_, i) => i - window + 1),
    [t, 1],
    { backend },
  ); // [T, 1]
  const windowed = where(compare('ge', keyPos, oldest), causal, Number.NEGATIVE_INFINITY); // [T, T]
  return scores.add(windowed).softmax(-1); // [H, T, T]
}

/**
 * The attention probabilities block `layer` of `model` gives `tokens` (at positions 0, 1, ...): the forward pass
 * runs up to that block, then softmax(q·kᵀ/√headDim + causal mask, or no mask with `mask: 'none'`) with the block's own projections (their
 * biases and q/k norms, if any) and RoPE (llama), query head h reading kv head floor(h / (numHeads / numKvHeads)). Returns [heads, T, T] row-major
 * (heads = 1 when `head` is given): row i is query i's weights over keys 0..T-1, summing to 1, zero above the
 * diagonal (with the causal mask) and, for a model with a `slidingWindow` W, on keys older than i - W + 1. These are the weights the layer applies to its values. Dropout is not applied: for inspection.
 */
export async function attentionMap(
  model: AttentionMapModel,
  tokens: readonly number[],
  options: AttentionMapOptions,
): Promise<Float32Array> {
  checkInput(model, tokens, options);
  const { layer, head } = options;
  const mask = options.mask ?? (model.layers[0] instanceof EncoderBlock ? 'none' : 'causal');
  const t = tokens.length;
  const map = scope(() => {
    const ids = tensor(Int32Array.from(tokens), [1, t], { backend: model.backend }); // [1, T]
    const probs = probabilities(model, ids, layer, mask); // [H, T, T]
    return head === undefined ? probs : probs.slice([head, 0, 0], [1, t, t]); // [heads, T, T]
  });
  try {
    return await map.float32Data();
  } finally {
    map.dispose();
  }
}
