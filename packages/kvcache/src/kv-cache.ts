import { type Backend, getBackend, showShape, type Tensor, writeSlice } from '@loom/tensor';
import { type HeadShape, headDimOf } from './head-dim';
import {
  allocateLayers,
  checkCount,
  copyLayers,
  type LayerStorage,
  layerBytes,
  releaseLayers,
} from './layer-storage';

/** The shape of a cache: what each layer stores and for how many positions. */
export interface KVCacheOptions {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Positions the cache holds; storage for all of them is allocated up front. */
  readonly capacity: number;
  /** Sequences decoded together (default 1). */
  readonly batch?: number;
  /** Where the keys and values live (default: the current backend). */
  readonly backend?: Backend;
}

/** The fields of a model config a cache is sized from (a `TransformerConfig` or `ModelConfig` has them). */
export interface KVCacheModelShape extends HeadShape {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly maxSeqLen: number;
}

/** Keys and values of every layer so far, as `update` returns them. */
export interface KVPair {
  readonly k: Tensor;
  readonly v: Tensor;
}

/**
 * Keys and values of every layer on a backend, preallocated as [batch, capacity, numKvHeads, headDim] per layer
 * (only the key/value heads: grouped-query attention shrinks the cache by numHeads / numKvHeads). It is the
 * `KVStore` of `@loom/nn`: pass it as `{ offset, cache }` to `TransformerLM.forward` and each attention layer
 * appends its new keys and values with `writeSlice`.
 *
 * `update` returns views of the whole preallocated storage, [batch, capacity, numKvHeads, headDim], not a copy of
 * the filled prefix: causal attention with the query offset `SelfAttention` passes sees only keys s ≤ offset + t,
 * so the positions past the new ones are never read, and no step copies the prefix.
 *
 * Call `dispose()` when done; a cache garbage-collected without it frees its storage then, as a backstop.
 */
export class KVCache {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly capacity: number;
  readonly batch: number;
  readonly backend: Backend;
  readonly #storage: LayerStorage;
  readonly #lengths: number[];

  /** A cache for a model: `capacity` defaults to the model's `maxSeqLen`. */
  static forModel(
    config: KVCacheModelShape,
    options: { readonly capacity?: number; readonly batch?: number; readonly backend?: Backend } = {},
  ): KVCache {
    return new KVCache({
      numLayers: config.numLayers,
      numKvHeads: config.numKvHeads,
      headDim: headDimOf(config),
      capacity: options.capacity ?? config.maxSeqLen,
      batch: options.batch,
      backend: options.backend,
    });
  }

  constructor(options: KVCacheOptions) {
    this.numLayers = checkCount('KVCache', 'numLayers', options.numLayers, 1);
    this.numKvHeads = checkCount('KVCache', 'numKvHeads', options.numKvHeads, 1);
    this.headDim = checkCount('KVCache', 'headDim', options.headDim, 1);
    this.capacity = checkCount('KVCache', 'capacity', options.capacity, 1);
    this.batch = checkCount('KVCache', 'batch', options.batch ?? 1, 1);
    this.backend = options.backend ?? getBackend();
    const shape = [this.batch, this.capacity, this.numKvHeads, this.headDim]; // [B, capacity, Hkv, hd]
    this.#storage = allocateLayers(this, this.numLayers, shape, this.backend);
    this.#lengths = new Array<number>(this.numLayers).fill(0);
  }

  /** Positions stored in every layer. */
  get length(): number {
    return Math.min(...this.#lengths);
  }

  /** Positions still free. */
  get remaining(): number {
    return this.capacity - this.length;
  }

  /**
   * Stores k, v [batch, T, numKvHeads, headDim] of `layer` at position `offset`, which must be the layer's current
   * length, and returns views of the layer's whole storage [batch, capacity, numKvHeads, headDim] (positions
   * below offset + T are filled). Disposing the views does not free the cache.
   */
  update(layer: number, k: Tensor, v: Tensor, offset: number): KVPair {
    const length = this.#layerLength(layer, 'update');
    if (offset !== length) {
      throw new Error(
        `KVCache.update: layer ${layer} holds ${length} positions, so new keys go at offset ${length}, got ${offset}; ` +
          `call truncate(${offset}) first to overwrite from there`,
      );
    }
    this.#write(layer, k, v, 'update');
    return this.#views(layer);
  }

  /**
   * Counts positions offset..offset + count - 1 of `layer` as stored, for a caller that writes them itself (a fused
   * attention step), and returns views of the layer's whole storage [batch, capacity, numKvHeads, headDim] to write
   * them into. `offset` must be the layer's current length, as for `update`.
   */
  reserve(layer: number, offset: number, count: number): KVPair {
    const length = this.#layerLength(layer, 'reserve');
    if (offset !== length || !Number.isInteger(count) || count < 1 || offset + count > this.capacity) {
      throw new Error(
        `KVCache.reserve: layer ${layer} holds ${length} of ${this.capacity} positions; expected offset ${length} and ` +
          `a count of 1 to ${this.capacity - length}, got offset ${offset} and count ${count}`,
      );
    }
    this.#lengths[layer] = offset + count;
    return this.#views(layer);
  }

  /** Views of the storage of `layer` (disposing them does not free the cache). */
  #views(layer: number): KVPair {
    const keys = this.#storage.keys[layer];
    const values = this.#storage.values[layer];
    return { k: keys.view(keys.shape), v: values.view(values.shape) };
  }

  /** Appends k, v [batch, T, numKvHeads, headDim] of `layer` after its stored positions. */
  append(layer: number, k: Tensor, v: Tensor): void {
    this.#layerLength(layer, 'append');
    this.#write(layer, k, v, 'append');
  }

  /** Forgets every position from `length` on (for example to reuse a shared prefix); the storage stays allocated. */
  truncate(length: number): void {
    if (!Number.isInteger(length) || length < 0 || length > this.length) {
      throw new Error(
        `KVCache.truncate: length must be an integer in [0, ${this.length}] (the positions stored), got ${length}`,
      );
    }
    this.#lengths.fill(length);
  }

  /** An independent copy (same capacity, same positions) to continue along another branch. */
  clone(): KVCache {
    const copy = new KVCache(this);
    copyLayers(copy.#storage, this.#storage);
    copy.#lengths.splice(0, this.numLayers, ...this.#lengths);
    return copy;
  }

  /** Bytes of backend storage the cache holds (all of its capacity). */
  bytes(): number {
    return layerBytes(this.#storage);
  }

  /** Frees the storage; the cache cannot be used afterwards. */
  dispose(): void {
    releaseLayers(this, this.#storage);
  }

  #layerLength(layer: number, op: string): number {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.numLayers) {
      throw new Error(`KVCache.${op}: layer must be an integer in [0, ${this.numLayers - 1}], got ${layer}`);
    }
    return this.#lengths[layer];
  }

  #write(layer: number, k: Tensor, v: Tensor, op: string): void {
    const offset = this.#lengths[layer];
    const [b, t, h, d] = k.shape;
    const fits =
      k.rank === 4 &&
      v.rank === 4 &&
      k.shape.every((size, i) => size === v.shape[i]) &&
      b === this.batch &&
      h === this.numKvHeads &&
      d === this.headDim;
    if (!fits) {
      throw new Error(
        `KVCache.${op}: expected k and v of shape [${this.batch}, T, ${this.numKvHeads}, ${this.headDim}] ` +
          `([batch, steps, numKvHeads, headDim]), got k ${showShape(k.shape)} and v ${showShape(v.shape)}`,
      );
    }
    if (offset + t > this.capacity) {
      throw new Error(
        `KVCache.${op}: positions ${offset}..${offset + t - 1} of layer ${layer} exceed the capacity of ${this.capacity}; ` +
          'create the cache with a larger capacity or truncate it',
      );
    }
    writeSlice(this.#storage.keys[layer], k, [0, offset, 0, 0]);
    writeSlice(this.#storage.values[layer], v, [0, offset, 0, 0]);
    this.#lengths[layer] = offset + t;
  }
}
