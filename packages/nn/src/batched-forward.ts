import { concat, scope, type Tensor, tensor } from '@loom/tensor';
import { headDim } from './config';
import type { KVStore } from './kv-store';
import type { DecoderBlock } from './layers/block';
import type { TransformerLM } from './transformer';

/** One sequence's share of a batched step: its new tokens, the position of the first, and its own cache. */
export interface BatchSequence {
  readonly tokens: readonly number[];
  readonly offset: number;
  readonly cache: KVStore;
}

/** Where a sequence's tokens sit among the packed rows. */
interface Span {
  readonly start: number;
  readonly length: number;
  readonly offset: number;
  readonly cache: KVStore;
}

function checkSequences(model: TransformerLM, sequences: readonly BatchSequence[]): void {
  const { vocabSize, maxSeqLen } = model.config;
  if (sequences.length === 0) throw new Error('forwardBatch: expected at least one sequence, got none');
  sequences.forEach((sequence, i) => {
    const { tokens, offset } = sequence;
    if (tokens.length === 0) throw new Error(`forwardBatch: sequence ${i} has no tokens; give at least one`);
    const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (bad >= 0) {
      throw new Error(
        `forwardBatch: sequence ${i} token ${bad} is ${tokens[bad]}; ids must be integers in [0, ${vocabSize}) (the model's vocabulary)`,
      );
    }
    if (!Number.isInteger(offset) || offset < 0 || offset + tokens.length > maxSeqLen) {
      throw new Error(
        `forwardBatch: sequence ${i} puts ${tokens.length} tokens at offset ${offset}; positions must lie in [0, ${maxSeqLen}) (the model's maxSeqLen)`,
      );
    }
  });
  if (model.training && (model.options.dropout ?? 0) > 0) {
    throw new Error('forwardBatch: the model is training with dropout; call model.eval() before decoding');
  }
}

/**
 * Attention of one block over packed rows x [1, N, dim]: the projections run once over all N rows; rotary
 * positions, the cache update and attention itself run per sequence, each at its own offset. -> [1, N, dim].
 */
function packedAttention(
  model: TransformerLM,
  block: DecoderBlock,
  x: Tensor,
  spans: readonly Span[],
): Tensor {
  return scope(() => {
    const { numHeads, numKvHeads } = model.config;
    const hd = headDim(model.config);
    const layer = block.attention;
    const { q, k, v } = layer.project(x); // [1, N, H, hd], [1, N, Hkv, hd], [1, N, Hkv, hd]
    const outs = spans.map(({ start, length, offset, cache }) => {
      const rows = (t: Tensor, heads: number) => t.slice([0, start, 0, 0], [1, length, heads, hd]); // [1, T, heads, hd]
      const keys = layer.rotate(rows(k, numKvHeads), offset);
      const past = cache.update(layer.layer, keys, rows(v, numKvHeads), offset);
      const queries = layer.rotate(rows(q, numHeads), offset);
      return layer.attend(queries, past, offset); // [1, T, H, hd]
    });
    const joined = outs.length === 1 ? outs[0] : concat(outs, 1); // [1, N, H, hd]
    return layer.output(joined); // [1, N, dim]
  });
}

/** One decoder block over packed rows [1, N, dim], with the block's own norm placement. */
function packedBlock(model: TransformerLM, block: DecoderBlock, x: Tensor, spans: readonly Span[]): Tensor {
  return scope(() => {
    if (block.placement === 'pre') {
      const h = x.add(packedAttention(model, block, block.attentionNorm.forward(x), spans));
      return h.add(block.feedForward.forward(block.ffnNorm.forward(h)));
    }
    const h = block.attentionNorm.forward(x.add(packedAttention(model, block, x, spans)));
    return block.ffnNorm.forward(h.add(block.feedForward.forward(h)));
  });
}

/**
 * One forward pass over several sequences at once, for continuous batching: every sequence's new tokens (one
 * for a decode step, a chunk of its prompt for a prefill) are packed as rows of a single [1, N, dim] batch, so
 * each weight matrix is read once per step for all of them; each sequence keeps its own positions and cache
 * (`update` stores its keys and values at its offset). Returns the logits [sequences, vocab] of each sequence's
 * last token; the output projection runs on those rows only. The same numbers as running each sequence alone
 * through `TransformerLM.hidden` and `project`. Dropout is not applied: this is for inference.
 */
export function forwardBatch(model: TransformerLM, sequences: readonly BatchSequence[]): Tensor {
  checkSequences(model, sequences);
  let start = 0;
  const spans: Span[] = sequences.map(({ tokens, offset, cache }) => {
    const span = { start, length: tokens.length, offset, cache };
    start += tokens.length;
    return span;
  });
  const n = start;
  const { dim, vocabSize } = model.config;
  const backend = model.backend;
  return scope(() => {
    const ids = tensor(Int32Array.from(sequences.flatMap((s) => s.tokens)), [1, n], { backend }); // [1, N]
    let x = model.tokEmbeddings.forward(ids); // [1, N, dim]
    if (model.posEmbeddings) {
      const positions = spans.flatMap(({ length, offset }) => Array.from({ length }, (_, i) => offset + i));
      x = x.add(model.posEmbeddings.forward(tensor(Int32Array.from(positions), [n], { backend }))); // + [N, dim]
    }
    for (const block of model.layers) x = packedBlock(model, block, x, spans);
    const h = model.norm.forward(x); // [1, N, dim]
    const lasts = spans.map(({ start, length }) => h.slice([0, start + length - 1, 0], [1, 1, dim])); // [1, 1, dim]
    const last = lasts.length === 1 ? lasts[0] : concat(lasts, 1); // [1, S, dim]
    return model.project(last).reshape([sequences.length, vocabSize]); // [S, vocab]
  });
}
