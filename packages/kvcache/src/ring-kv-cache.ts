import {
  type Backend,
  concat,
  getBackend,
  scope,
  showShape,
  slice,
  type Tensor,
  writeSlice,
} from '@loom/tensor';
import { type HeadShape, headDimOf } from './head-dim';
import {
  allocateLayers,
  checkCount,
  copyLayers,
  type LayerStorage,
  layerBytes,
  releaseLayers,
} from './layer-storage';

/** The shape of a ring cache: what each layer stores and the window of positions it keeps. */
export interface RingKVCacheOptions {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Positions each token attends to (the model's sliding window); the cache holds this many slots. */
  readonly window: number;
  /** Sequences decoded together (default 1). */
  readonly batch?: number;
  /** Where the keys and values live (default: the current backend). */
  readonly backend?: Backend;
}

/** The fields of a sliding-window model config a ring cache is sized from. */
export interface RingKVCacheModelShape extends HeadShape {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly slidingWindow?: number;
}

/**
 * What `update` returns, `@loom/nn`'s `StoredKV`: ring slots after a one-token update (the `filled` first slots are
 * exactly the keys the new token sees), else the keys in position order from absolute position `start`.
 */
export type RingKVPair =
  | {
      readonly k: Tensor;
      readonly v: Tensor;
      readonly layout: { readonly kind: 'slots'; readonly filled: number };
    }
  | {
      readonly k: Tensor;
      readonly v: Tensor;
      readonly layout: { readonly kind: 'positions'; readonly start: number };
    };

/**
 * The key/value cache of a sliding-window model (Mistral): per layer a ring of `window` slots,
 * [batch, window, numKvHeads, headDim], where position p lives in slot p mod window. Its memory stays flat however
 * long the sequence grows. Keys arrive already rotated at their absolute positions (RoPE before the cache), so the
 * order of the slots does not matter to attention.
 *
 * It is a `KVStore` of `@loom/nn`: pass it as `{ offset: cache.length, cache }`. A one-token update returns the slots
 * themselves (no copy); a longer one (prefill) returns the kept past in position order joined to the new keys, then
 * keeps the last `window` of them. Call `dispose()` when done.
 */
export class RingKVCache {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly window: number;
  readonly batch: number;
  readonly backend: Backend;
  readonly #storage: LayerStorage;
  /** Positions each layer has seen (the next one's absolute position). */
  readonly #lengths: number[];

  /** A ring for a model whose config names a `slidingWindow`. */
  static forModel(
    config: RingKVCacheModelShape,
    options: { readonly batch?: number; readonly backend?: Backend } = {},
  ): RingKVCache {
    if (config.slidingWindow === undefined) {
      throw new Error(
        'RingKVCache.forModel: the config has no slidingWindow; use KVCache.forModel for full attention',
      );
    }
    return new RingKVCache({
      numLayers: config.numLayers,
      numKvHeads: config.numKvHeads,
      headDim: headDimOf(config),
      window: config.slidingWindow,
      batch: options.batch,
      backend: options.backend,
    });
  }

  constructor(options: RingKVCacheOptions) {
    this.numLayers = checkCount('RingKVCache', 'numLayers', options.numLayers, 1);
    this.numKvHeads = checkCount('RingKVCache', 'numKvHeads', options.numKvHeads, 1);
    this.headDim = checkCount('RingKVCache', 'headDim', options.headDim, 1);
    this.window = checkCount('RingKVCache', 'window', options.window, 1);
    this.batch = checkCount('RingKVCache', 'batch', options.batch ?? 1, 1);
    this.backend = options.backend ?? getBackend();
    const shape = [this.batch, this.window, this.numKvHeads, this.headDim]; // [B, W, Hkv, hd]
    this.#storage = allocateLayers(this, this.numLayers, shape, this.backend);
    this.#lengths = new Array<number>(this.numLayers).fill(0);
  }

  /** Positions seen by every layer: the absolute position of the next token. */
  get length(): number {
    return Math.min(...this.#lengths);
  }

  /** Positions still free: a ring never fills. */
  get remaining(): number {
    return Number.POSITIVE_INFINITY;
  }

  /**
   * Stores k, v [batch, T, numKvHeads, headDim] of `layer` at absolute position `offset` (the layer's length) and
   * returns what attention needs: for T = 1 views of the slots, the first min(offset + 1, window) filled; else the
   * kept past and the new keys in position order, starting at position max(0, offset - window).
   */
  update(layer: number, k: Tensor, v: Tensor, offset: number): RingKVPair {
    const length = this.#layerLength(layer, 'update');
    if (offset !== length) {
      throw new Error(
        `RingKVCache.update: layer ${layer} has seen ${length} positions, so new keys go at offset ${length}, ` +
          `got ${offset}; call truncate(${offset}) first to go back there`,
      );
    }
    this.#checkShape(k, v);
    const keys = this.#storage.keys[layer];
    const values = this.#storage.values[layer];
    if (k.shape[1] === 1) {
      this.#store(layer, k, v);
      const filled = Math.min(this.#lengths[layer], this.window);
      return { k: keys.view(keys.shape), v: values.view(values.shape), layout: { kind: 'slots', filled } };
    }
    const kept = Math.min(offset, this.window);
    const joined = scope(() => ({
      k: concat([...this.#inOrder(keys, offset, kept), k], 1), // [B, kept + T, Hkv, hd]
      v: concat([...this.#inOrder(values, offset, kept), v], 1), // [B, kept + T, Hkv, hd]
    }));
    this.#store(layer, k, v);
    return { ...joined, layout: { kind: 'positions', start: offset - kept } };
  }

  /**
   * Forgets every position from `length` on. The ring can go back only while the positions before `length` that
   * the window needs are still held: any length before the ring first wrapped, else only the current length.
   */
  truncate(length: number): void {
    const held = this.length;
    const reachable = held <= this.window ? 0 : held;
    if (!Number.isInteger(length) || length < reachable || length > held) {
      throw new Error(
        `RingKVCache.truncate: length must be an integer in [${reachable}, ${held}] (older positions were ` +
          `overwritten in the ring of ${this.window} slots), got ${length}; start a new cache to go further back`,
      );
    }
    this.#lengths.fill(length);
  }

  /** An independent copy (same window, same positions) to continue along another branch. */
  clone(): RingKVCache {
    const copy = new RingKVCache(this);
    copyLayers(copy.#storage, this.#storage);
    copy.#lengths.splice(0, this.numLayers, ...this.#lengths);
    return copy;
  }

  /** Bytes of backend storage the cache holds: `window` positions per layer, however many it has seen. */
  bytes(): number {
    return layerBytes(this.#storage);
  }

  /** Frees the storage; the cache cannot be used afterwards. */
  dispose(): void {
    releaseLayers(this, this.#storage);
  }

  /** The `kept` positions before `offset`, oldest first: one slice, or two when they wrap around the ring. */
  #inOrder(ring: Tensor, offset: number, kept: number): Tensor[] {
    if (kept === 0) return [];
    const [b, , h, d] = ring.shape;
    const first = (offset - kept) % this.window;
    const head = Math.min(kept, this.window - first);
    const parts = [slice(ring, [0, first, 0, 0], [b, head, h, d])]; // [B, head, Hkv, hd]
    if (kept > head) parts.push(slice(ring, [0, 0, 0, 0], [b, kept - head, h, d])); // [B, kept - head, Hkv, hd]
    return parts;
  }

  /** Writes the last `window` of the new positions into their slots (p mod window), wrapping in two pieces. */
  #store(layer: number, k: Tensor, v: Tensor): void {
    const offset = this.#lengths[layer];
    const [b, t, h, d] = k.shape;
    const n = Math.min(t, this.window);
    const from = offset + t - n; // absolute position of the first kept new key
    const slot = from % this.window;
    const head = Math.min(n, this.window - slot);
    scope(() => {
      for (const [ring, x] of [
        [this.#storage.keys[layer], k],
        [this.#storage.values[layer], v],
      ] as const) {
        writeSlice(ring, n === t && head === t ? x : slice(x, [0, t - n, 0, 0], [b, head, h, d]), [
          0,
          slot,
          0,
          0,
        ]);
        if (n > head) writeSlice(ring, slice(x, [0, t - n + head, 0, 0], [b, n - head, h, d]), [0, 0, 0, 0]);
      }
    });
    this.#lengths[layer] = offset + t;
  }

  #layerLength(layer: number, op: string): number {
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.numLayers) {
      throw new Error(
        `RingKVCache.${op}: layer must be an integer in [0, ${this.numLayers - 1}], got ${layer}`,
      );
    }
    return this.#lengths[layer];
  }

  #checkShape(k: Tensor, v: Tensor): void {
    const [b, t, h, d] = k.shape;
    const fits =
      k.rank === 4 &&
      v.rank === 4 &&
      k.shape.every((size, i) => size === v.shape[i]) &&
      b === this.batch &&
      t >= 1 &&
      h === this.numKvHeads &&
      d === this.headDim;
    if (!fits) {
      throw new Error(
        `RingKVCache.update: expected k and v of shape [${this.batch}, T ≥ 1, ${this.numKvHeads}, ${this.headDim}] ` +
          `([batch, steps, numKvHeads, headDim]), got k ${showShape(k.shape)} and v ${showShape(v.shape)}`,
      );
    }
  }
}
