import { attention, concat, gather, scope, type Tensor, tensor, zeros } from '@loom/tensor';
import { headDim } from './config';
import type { KVStore } from './kv-store';
import type { SelfAttention } from './layers/attention';
import type { DecoderBlock } from './layers/block';
import type { TransformerLM } from './transformer';

/** One sequence's share of a batched step: its new tokens, the position of the first, and its own cache. */
export interface BatchSequence {
  readonly tokens: readonly number[];
  readonly offset: number;
  readonly cache: KVStore;
}

/** Storage several sequences' caches share, a row (slot) each: per layer keys and values [slots, capacity, Hkv, hd]. */
export interface SharedKVStorage {
  /** The keys of `layer`, [slots, capacity, Hkv, hd] (the storage itself: not disposed by forwardBatch). */
  keys(layer: number): Tensor;
  /** The values of `layer`, [slots, capacity, Hkv, hd]. */
  values(layer: number): Tensor;
  /**
   * Stores one step of several of its slots at once: row i of k, v [N, 1, Hkv, hd] into slots[i] at offsets[i], as
   * each slot's `write` would (optional: without it, forwardBatch writes slot by slot).
   */
  writeSteps?(
    layer: number,
    slots: readonly SlotKVStore[],
    k: Tensor,
    v: Tensor,
    offsets: readonly number[],
  ): void;
}

/**
 * A sequence's cache that is one slot of a `SharedKVStorage` (`@loom/kvcache`'s `KVSlot`). `forwardBatch` runs the
 * one-token steps of all sequences whose slots share a storage through one attention call over that storage, with
 * a key length per slot, instead of one call per sequence.
 */
export interface SlotKVStore extends KVStore {
  readonly storage: SharedKVStorage;
  /** The row of `storage` this sequence holds. */
  readonly slot: number;
  /** Stores k, v [1, T, Hkv, hd] of `layer` at `offset` (like `update`, without returning the keys). */
  write(layer: number, k: Tensor, v: Tensor, offset: number): void;
}

function isSlot(cache: KVStore): cache is SlotKVStore {
  return 'storage' in cache && 'slot' in cache && 'write' in cache && typeof cache.slot === 'number';
}

/** Where a sequence's tokens sit among the packed rows; `slot` is set for the decode rows attended together. */
interface Span {
  readonly start: number;
  readonly length: number;
  readonly offset: number;
  readonly cache: KVStore;
  readonly slot: number | undefined;
}

/** The storage the one-token steps of slotted sequences share this step, and how many slots it has. */
interface SlotGroup {
  readonly storage: SharedKVStorage;
  readonly slots: number;
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
 * Attention of one block over packed rows x [1, N, dim]: the key and value projections run once over all N rows;
 * rotary positions and the cache update run per sequence, each at its own offset; attention runs per sequence
 * too, except for the one-token steps of `group`'s slots, which attend in one call over the shared storage (a key
 * length per slot: 0 for the slots not decoding this step). -> [1, N, dim]. With `keep` (i32 [S], each
 * sequence's last packed row), only those rows ask queries: -> [1, S, dim].
 */
function packedAttention(
  model: TransformerLM,
  block: DecoderBlock,
  x: Tensor,
  spans: readonly Span[],
  group: SlotGroup | undefined,
  keep: Tensor | undefined,
): Tensor {
  return scope(() => {
    const { numHeads, numKvHeads } = model.config;
    const hd = headDim(model.config);
    const layer = block.attention;
    const { k, v } = layer.keysValues(x); // [1, N, Hkv, hd] each
    const q = layer.queries(keep ? pickRows(x, keep) : x); // [1, N or S, H, hd]
    if (group && !keep && spans.every(({ slot, length }) => slot !== undefined && length === 1)) {
      return layer.output(slotStep(layer, group, spans, q, k, v)); // [1, N, dim]
    }
    const outs: Tensor[] = [];
    const slotQueries = new Array<Tensor | undefined>(group?.slots ?? 0).fill(undefined);
    spans.forEach(({ start, length, offset, cache, slot }, i) => {
      const rows = (t: Tensor, heads: number) => t.slice([0, start, 0, 0], [1, length, heads, hd]); // [1, T, heads, hd]
      const keys = layer.rotate(rows(k, numKvHeads), offset);
      // With `keep`, the span's one query is its last row, at position offset + length - 1.
      const qOffset = keep ? offset + length - 1 : offset;
      const own = keep ? q.slice([0, i, 0, 0], [1, 1, numHeads, hd]) : rows(q, numHeads); // [1, T or 1, H, hd]
      const queries = layer.rotate(own, qOffset);
      if (slot !== undefined && isSlot(cache)) {
        cache.write(layer.layer, keys, rows(v, numKvHeads), offset);
        slotQueries[slot] = queries; // [1, 1, H, hd]
        return;
      }
      const past = cache.update(layer.layer, keys, rows(v, numKvHeads), offset);
      outs.push(layer.attend(queries, past, qOffset)); // [1, T or 1, H, hd]
    });
    const heads =
      group === undefined
        ? outs.length === 1
          ? outs[0]
          : concat(outs, 1)
        : slottedAttention(layer.layer, group, spans, slotQueries, outs, [numHeads, hd]); // [1, N or S, H, hd]
    return layer.output(heads); // [1, N or S, dim]
  });
}

/**
 * A decode step of slotted sequences only (one row each, in `group`'s slots): the rows' queries and keys q
 * [1, N, H, hd], k [1, N, Hkv, hd] rotated in one call each (a position per row), each row's key and value v
 * written to its slot, then one attention call over the storage. -> the attention outputs [1, N, H, hd].
 */
function slotStep(
  layer: SelfAttention,
  group: SlotGroup,
  spans: readonly Span[],
  q: Tensor,
  k: Tensor,
  v: Tensor,
): Tensor {
  const [, n, numHeads, hd] = q.shape;
  const numKvHeads = k.shape[2];
  const positions = spans.map(({ offset }) => offset);
  const keys = layer.rotate(k.reshape([n, 1, numKvHeads, hd]), positions); // [N, 1, Hkv, hd]
  const queries = layer.rotate(q.reshape([n, 1, numHeads, hd]), positions); // [N, 1, H, hd]
  const values = v.reshape([n, 1, numKvHeads, hd]);
  const slots = spans.map(({ cache }) => {
    if (!isSlot(cache)) throw new Error('forwardBatch: expected a slotted sequence');
    return cache;
  });
  if (group.storage.writeSteps) group.storage.writeSteps(layer.layer, slots, keys, values, positions);
  else {
    slots.forEach((cache, i) => {
      const row = (t: Tensor) => t.slice([i, 0, 0, 0], [1, 1, numKvHeads, hd]); // [1, 1, Hkv, hd]
      cache.write(layer.layer, row(keys), row(values), positions[i]);
    });
  }
  const inOrder = n === group.slots && spans.every(({ slot }, i) => slot === i);
  const slotQueries = inOrder ? queries : bySlot(queries, spans, group.slots); // [slots, 1, H, hd]
  const attended = attention(
    slotQueries,
    group.storage.keys(layer.layer),
    group.storage.values(layer.layer),
    {
      mask: { kind: 'none' },
      keyLengths: slotKeyLengths(spans, group.slots),
    },
  ); // [slots, 1, H, hd]
  const width = numHeads * hd;
  const rows = inOrder
    ? attended
    : gather(
        attended.reshape([group.slots, width]),
        tensor(
          Int32Array.from(spans, ({ slot }) => slot ?? 0),
          [n],
          { backend: q.backend },
        ),
      ); // [N, width]
  return rows.reshape([1, n, numHeads, hd]);
}

/** The rows of queries [N, 1, H, hd] (span i's at row i) at their spans' slots, zeros at the others: [slots, 1, H, hd]. */
function bySlot(queries: Tensor, spans: readonly Span[], slots: number): Tensor {
  const [n, , h, hd] = queries.shape;
  const table = concat([queries.reshape([n, h * hd]), zeros([1, h * hd], { backend: queries.backend })], 0); // [N + 1, H·hd]
  const ids = new Int32Array(slots).fill(n);
  spans.forEach(({ slot }, i) => {
    if (slot !== undefined) ids[slot] = i;
  });
  return gather(table, tensor(ids, [slots], { backend: queries.backend })).reshape([slots, 1, h, hd]);
}

/** Keys each slot's query reads this step: its position + 1 for the decoding slots, 0 for the others. */
function slotKeyLengths(spans: readonly Span[], slots: number): number[] {
  const keyLengths = new Array<number>(slots).fill(0);
  for (const { slot, offset } of spans) if (slot !== undefined) keyLengths[slot] = offset + 1;
  return keyLengths;
}

/** The packed rows `ids` (i32 [R]) of x [1, N, ...rest] -> [1, R, ...rest]. */
function pickRows(x: Tensor, ids: Tensor): Tensor {
  const [, n, ...rest] = x.shape;
  return gather(x.reshape([n, ...rest]), ids).reshape([1, ids.shape[0], ...rest]);
}

/**
 * The attention outputs [1, R, H, hd] of every query row in order: the slotted rows from one attention call of
 * their queries (in slot order, zeros for the other slots) over the group's storage, the others from `outs`
 * (each [1, rows, H, hd], in span order).
 */
function slottedAttention(
  layer: number,
  { storage, slots }: SlotGroup,
  spans: readonly Span[],
  slotQueries: readonly (Tensor | undefined)[],
  outs: readonly Tensor[],
  [numHeads, hd]: readonly [number, number],
): Tensor {
  const width = numHeads * hd;
  const backend = outs[0]?.backend ?? storage.keys(layer).backend;
  const idle = slotQueries.includes(undefined) ? zeros([1, 1, numHeads, hd], { backend }) : undefined;
  const queries = concat(
    slotQueries.flatMap((t) => t ?? idle ?? []),
    0,
  ); // [slots, 1, H, hd]
  const attended = attention(queries, storage.keys(layer), storage.values(layer), {
    mask: { kind: 'none' },
    keyLengths: slotKeyLengths(spans, slots),
  }); // [slots, 1, H, hd]
  // One table of every output row: the slots', then the other sequences' rows; each packed row picks its own.
  const table = concat(
    [attended.reshape([slots, width]), ...outs.map((o) => o.reshape([o.shape[1], width]))],
    0,
  );
  const picks: number[] = [];
  let next = slots;
  let other = 0;
  for (const { slot } of spans) {
    if (slot !== undefined) {
      picks.push(slot);
      continue;
    }
    const rows = outs[other++].shape[1];
    for (let i = 0; i < rows; i++) picks.push(next++);
  }
  const ids = tensor(Int32Array.from(picks), [picks.length], { backend }); // [R]
  return gather(table, ids).reshape([1, picks.length, numHeads, hd]); // [1, R, H, hd]
}

/**
 * One decoder block over packed rows [1, N, dim], with the block's own norm placement -> [1, N, dim]; with `keep`
 * (i32 [S], each sequence's last packed row), only those rows leave the attention ([1, S, dim]): the last block
 * keeps them, the only rows whose scores are read.
 */
function packedBlock(
  model: TransformerLM,
  block: DecoderBlock,
  x: Tensor,
  spans: readonly Span[],
  group: SlotGroup | undefined,
  keep: Tensor | undefined,
): Tensor {
  return scope(() => {
    const residual = keep ? pickRows(x, keep) : x; // [1, N or S, dim]
    if (block.placement === 'pre') {
      const h = residual.add(
        packedAttention(model, block, block.attentionNorm.forward(x), spans, group, keep),
      );
      const stepping = spans.every((s) => s.length === 1);
      return (
        (stepping ? block.fusedFeedForward(h) : undefined) ??
        h.add(block.feedForward.forward(block.ffnNorm.forward(h)))
      );
    }
    const h = block.attentionNorm.forward(residual.add(packedAttention(model, block, x, spans, group, keep)));
    return block.ffnNorm.forward(h.add(block.feedForward.forward(h)));
  });
}

/** Throws unless `slot` is one of the storage's `slots` and no earlier sequence of the batch holds it. */
function checkSlot(sequence: number, slot: number, slots: number, taken: Set<number>): void {
  if (!Number.isInteger(slot) || slot < 0 || slot >= slots) {
    throw new Error(
      `forwardBatch: sequence ${sequence} is in slot ${slot}; its shared storage has slots [0, ${slots})`,
    );
  }
  if (taken.has(slot)) {
    throw new Error(
      `forwardBatch: sequence ${sequence} is in slot ${slot}, which another sequence of the batch holds; give each sequence its own slot`,
    );
  }
  taken.add(slot);
}

/**
 * The storage of the first sequence taking a one-token step in a slot (a `SlotKVStore`), when the model attends
 * without a sliding window (a window needs each query's own position); undefined when there is none.
 */
function slotGroup(model: TransformerLM, sequences: readonly BatchSequence[]): SlotGroup | undefined {
  if (model.config.slidingWindow !== undefined) return undefined;
  const first = sequences.find(({ tokens, cache }) => tokens.length === 1 && isSlot(cache));
  if (first === undefined || !isSlot(first.cache)) return undefined;
  const { storage } = first.cache;
  return { storage, slots: storage.keys(0).shape[0] };
}

/**
 * One forward pass over several sequences at once, for continuous batching: every sequence's new tokens (one
 * for a decode step, a chunk of its prompt for a prefill) are packed as rows of a single [1, N, dim] batch, so
 * each weight matrix is read once per step for all of them; each sequence keeps its own positions and cache
 * (`update` stores its keys and values at its offset). Sequences whose caches are slots of one shared storage
 * (`SlotKVStore`, `@loom/kvcache`'s `SlotKVCache`) attend in one call per layer when they take a one-token step. Returns the logits [sequences, vocab] of each sequence's
 * last token; the output projection runs on those rows only. The same numbers as running each sequence alone
 * through `TransformerLM.hidden` and `project`. Dropout is not applied: this is for inference.
 */
export function forwardBatch(model: TransformerLM, sequences: readonly BatchSequence[]): Tensor {
  checkSequences(model, sequences);
  const group = slotGroup(model, sequences);
  const taken = new Set<number>();
  let start = 0;
  const spans: Span[] = sequences.map(({ tokens, offset, cache }, i) => {
    const slotted =
      group !== undefined && tokens.length === 1 && isSlot(cache) && cache.storage === group.storage;
    const slot = slotted ? cache.slot : undefined;
    if (slot !== undefined) checkSlot(i, slot, group?.slots ?? 0, taken);
    const span = { start, length: tokens.length, offset, cache, slot };
    start += tokens.length;
    return span;
  });
  const n = start;
  const { vocabSize } = model.config;
  const backend = model.backend;
  return scope(() => {
    const ids = tensor(Int32Array.from(sequences.flatMap((s) => s.tokens)), [1, n], { backend }); // [1, N]
    let x = model.tokEmbeddings.forward(ids); // [1, N, dim]
    if (model.posEmbeddings) {
      const positions = spans.flatMap(({ length, offset }) => Array.from({ length }, (_, i) => offset + i));
      x = x.add(model.posEmbeddings.forward(tensor(Int32Array.from(positions), [n], { backend }))); // + [N, dim]
    }
    // Each sequence's last row; the last block outputs these alone (all rows when every sequence has one, or when
    // it is a mixture of experts, whose capacity depends on the row count).
    const lastRows =
      n === sequences.length
        ? undefined
        : tensor(
            Int32Array.from(spans, ({ start, length }) => start + length - 1),
            [sequences.length],
            { backend },
          ); // [S]
    const keep = model.config.moe === undefined ? lastRows : undefined;
    const last = model.layers.length - 1;
    model.layers.forEach((block, i) => {
      x = packedBlock(model, block, x, spans, group, i === last ? keep : undefined);
    }); // [1, S, dim], or [1, N, dim] without `keep`
    const h = model.norm.forward(x);
    const lasts = keep || !lastRows ? h : pickRows(h, lastRows); // [1, S, dim]
    return model.project(lasts).reshape([sequences.length, vocabSize]); // [S, vocab]
  });
}
