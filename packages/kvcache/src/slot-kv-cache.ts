import { type Backend, getBackend, showShape, slice, type Tensor, writeRows, writeSlice } from '@loom/tensor';
import { type HeadShape, headDimOf } from './head-dim';
import type { KVCacheModelShape, KVPair } from './kv-cache';
import { allocateLayers, checkCount, type LayerStorage, layerBytes, releaseLayers } from './layer-storage';

/** The shape of a slot cache: what each layer stores, for how many positions, and how many sequences. */
export interface SlotKVCacheOptions {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Positions each slot holds; storage for all of them is allocated up front. */
  readonly capacity: number;
  /** Sequences the cache holds at once, each in its own slot. */
  readonly slots: number;
  /** Where the keys and values live (default: the current backend). */
  readonly backend?: Backend;
}

/**
 * Keys and values of up to `slots` sequences decoded together with their own lengths (continuous batching): per
 * layer one tensor [slots, capacity, numKvHeads, headDim], a sequence in each slot. A sequence takes a slot with
 * `acquire()` and uses it as its cache; because the slots share their storage, one attention call can read every
 * sequence's keys at once (`keys(layer)` with a key length per slot), which `@loom/nn`'s `forwardBatch` does for a
 * decode step. Call `dispose()` when done; a cache garbage-collected without it frees its storage then.
 */
export class SlotKVCache {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly capacity: number;
  readonly slots: number;
  readonly backend: Backend;
  readonly #storage: LayerStorage;
  /** Free slot indices, the lowest taken first. */
  readonly #free: number[];

  /** A slot cache for a model: `capacity` defaults to the model's `maxSeqLen`. */
  static forModel(
    config: KVCacheModelShape & HeadShape,
    options: { readonly slots: number; readonly capacity?: number; readonly backend?: Backend },
  ): SlotKVCache {
    return new SlotKVCache({
      numLayers: config.numLayers,
      numKvHeads: config.numKvHeads,
      headDim: headDimOf(config),
      capacity: options.capacity ?? config.maxSeqLen,
      slots: options.slots,
      backend: options.backend,
    });
  }

  constructor(options: SlotKVCacheOptions) {
    this.numLayers = checkCount('SlotKVCache', 'numLayers', options.numLayers, 1);
    this.numKvHeads = checkCount('SlotKVCache', 'numKvHeads', options.numKvHeads, 1);
    this.headDim = checkCount('SlotKVCache', 'headDim', options.headDim, 1);
    this.capacity = checkCount('SlotKVCache', 'capacity', options.capacity, 1);
    this.slots = checkCount('SlotKVCache', 'slots', options.slots, 1);
    this.backend = options.backend ?? getBackend();
    const shape = [this.slots, this.capacity, this.numKvHeads, this.headDim]; // [slots, capacity, Hkv, hd]
    this.#storage = allocateLayers(this, this.numLayers, shape, this.backend);
    this.#free = Array.from({ length: this.slots }, (_, i) => i);
  }

  /** Slots not taken. */
  get free(): number {
    return this.#free.length;
  }

  /** Takes a free slot, empty, for one sequence; throws when every slot is taken. */
  acquire(): KVSlot {
    const slot = this.#free.shift();
    if (slot === undefined) {
      throw new Error(
        `SlotKVCache.acquire: all ${this.slots} slots are taken; release a slot first or create the cache with more slots`,
      );
    }
    return new KVSlot(this, slot, this.#storage, () => {
      this.#free.push(slot);
      this.#free.sort((a, b) => a - b);
    });
  }

  /** The keys of `layer`, [slots, capacity, numKvHeads, headDim]: the storage itself, not to be disposed. */
  keys(layer: number): Tensor {
    return this.#storage.keys[this.#checkLayer(layer, 'keys')];
  }

  /** The values of `layer`, [slots, capacity, numKvHeads, headDim]: the storage itself, not to be disposed. */
  values(layer: number): Tensor {
    return this.#storage.values[this.#checkLayer(layer, 'values')];
  }

  /**
   * Stores one step of several of its slots at once: row i of k, v [N, 1, numKvHeads, headDim] goes to slots[i] at
   * position offsets[i] (its layer's length), as `slots[i].write` would, in one scatter per tensor (a server's
   * decode step). Every slot is checked before anything is written.
   */
  writeSteps(
    layer: number,
    slots: readonly KVSlot[],
    k: Tensor,
    v: Tensor,
    offsets: readonly number[],
  ): void {
    this.#checkLayer(layer, 'writeSteps');
    const n = slots.length;
    const shape = [n, 1, this.numKvHeads, this.headDim];
    const fits = [k, v].every((t) => t.rank === 4 && t.shape.every((size, i) => size === shape[i]));
    if (!fits || offsets.length !== n) {
      throw new Error(
        `SlotKVCache.writeSteps: expected k and v of shape ${showShape(shape)} and ${n} offsets (one step of each of the ` +
          `${n} slots), got k ${showShape(k.shape)}, v ${showShape(v.shape)} and ${offsets.length} offsets`,
      );
    }
    slots.forEach((slot, i) => {
      if (slot.storage !== this)
        throw new Error(`SlotKVCache.writeSteps: slots[${i}] belongs to another cache`);
      slot.checkWrite(layer, offsets[i], 1);
    });
    const rows = slots.map((slot, i) => slot.slot * this.capacity + offsets[i]);
    const flat = [this.slots * this.capacity, this.numKvHeads, this.headDim]; // [slots · capacity, Hkv, hd]
    const [keys, values] = [this.#storage.keys[layer].view(flat), this.#storage.values[layer].view(flat)];
    try {
      writeRows(keys, k.reshape([n, this.numKvHeads, this.headDim]), rows);
      writeRows(values, v.reshape([n, this.numKvHeads, this.headDim]), rows);
    } finally {
      keys.dispose();
      values.dispose();
    }
    slots.forEach((slot, i) => {
      slot.wrote(layer, offsets[i] + 1);
    });
  }

  /** Bytes of backend storage the cache holds (every slot's capacity). */
  bytes(): number {
    return layerBytes(this.#storage);
  }

  /** Frees the storage; neither the cache nor its slots can be used afterwards. */
  dispose(): void {
    releaseLayers(this, this.#storage);
  }

  #checkLayer(layer: number, op: string): number {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.numLayers) {
      throw new Error(
        `SlotKVCache.${op}: layer must be an integer in [0, ${this.numLayers - 1}], got ${layer}`,
      );
    }
    return layer;
  }
}

/**
 * One sequence's slot of a `SlotKVCache`: the `KVStore` of `@loom/nn` for that sequence, which `forwardBatch`
 * recognises by its `storage` and `slot` to attend to all slots together. `release()` gives the slot back.
 */
export class KVSlot {
  readonly #layers: LayerStorage;
  readonly #giveBack: () => void;
  readonly #lengths: number[];
  #released = false;

  constructor(
    /** The cache whose storage the slot is a row of. */
    readonly storage: SlotKVCache,
    /** The row of the storage this sequence holds. */
    readonly slot: number,
    layers: LayerStorage,
    giveBack: () => void,
  ) {
    this.#layers = layers;
    this.#giveBack = giveBack;
    this.#lengths = new Array<number>(storage.numLayers).fill(0);
  }

  /** Positions stored in every layer. */
  get length(): number {
    return Math.min(...this.#lengths);
  }

  /** Positions the slot holds at most. */
  get capacity(): number {
    return this.storage.capacity;
  }

  /**
   * Stores k, v [1, T, numKvHeads, headDim] of `layer` at position `offset` (the layer's length) and returns copies
   * of the slot's keys and values so far, [1, offset + T, numKvHeads, headDim], which the caller disposes.
   */
  update(layer: number, k: Tensor, v: Tensor, offset: number): KVPair {
    this.write(layer, k, v, offset);
    const end = this.#lengths[layer];
    const shape = [1, end, this.storage.numKvHeads, this.storage.headDim];
    const start = [this.slot, 0, 0, 0];
    return {
      k: slice(this.#layers.keys[layer], start, shape),
      v: slice(this.#layers.values[layer], start, shape),
    };
  }

  /** Stores k, v [1, T, numKvHeads, headDim] of `layer` at position `offset`, which must be the layer's length. */
  write(layer: number, k: Tensor, v: Tensor, offset: number): void {
    const { numKvHeads, headDim } = this.storage;
    const fits =
      k.rank === 4 &&
      v.rank === 4 &&
      k.shape.every((size, i) => size === v.shape[i]) &&
      k.shape[0] === 1 &&
      k.shape[2] === numKvHeads &&
      k.shape[3] === headDim;
    if (!fits) {
      throw new Error(
        `KVSlot.write: expected k and v of shape [1, T, ${numKvHeads}, ${headDim}] ([1, steps, numKvHeads, headDim]), ` +
          `got k ${showShape(k.shape)} and v ${showShape(v.shape)}`,
      );
    }
    const t = k.shape[1];
    this.checkWrite(layer, offset, t);
    writeSlice(this.#layers.keys[layer], k, [this.slot, offset, 0, 0]);
    writeSlice(this.#layers.values[layer], v, [this.slot, offset, 0, 0]);
    this.wrote(layer, offset + t);
  }

  /**
   * Throws unless `steps` positions of `layer` may be written at `offset`: the slot is held, `offset` is the layer's
   * length and the positions fit its capacity (what `write` and `SlotKVCache.writeSteps` check first).
   */
  checkWrite(layer: number, offset: number, steps: number): void {
    const { numLayers, capacity } = this.storage;
    if (this.#released) throw new Error(`KVSlot: slot ${this.slot} was released; acquire a new one`);
    if (!Number.isInteger(layer) || layer < 0 || layer >= numLayers) {
      throw new Error(`KVSlot.write: layer must be an integer in [0, ${numLayers - 1}], got ${layer}`);
    }
    const length = this.#lengths[layer];
    if (offset !== length) {
      throw new Error(
        `KVSlot.write: layer ${layer} holds ${length} positions, so new keys go at offset ${length}, got ${offset}`,
      );
    }
    if (offset + steps > capacity) {
      throw new Error(
        `KVSlot.write: positions ${offset}..${offset + steps - 1} of layer ${layer} exceed the slot's capacity of ${capacity}; ` +
          'create the cache with a larger capacity',
      );
    }
  }

  /** Records that `layer` now holds positions [0, length) (after a write that `checkWrite` allowed). */
  wrote(layer: number, length: number): void {
    this.#lengths[layer] = length;
  }

  /** Bytes of backend storage the slot's row holds (its share of the cache). */
  bytes(): number {
    return this.storage.bytes() / this.storage.slots;
  }

  /** Gives the slot back to its cache (idempotent); what it stored is overwritten by the next sequence. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#giveBack();
  }
}
