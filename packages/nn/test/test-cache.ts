import { keep, type Tensor, writeSlice, zeros } from '@loom/tensor';
import { headDim, type KVStore } from '../src/index';

/** What a test cache needs of a model's config. */
type CacheShape = Parameters<typeof headDim>[0] & {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly maxSeqLen: number;
};

/** A preallocated cache of `batch` sequences: [batch, maxSeqLen, Hkv, headDim] keys and values per layer. */
export class TestCache implements KVStore {
  readonly #keys: Tensor[];
  readonly #values: Tensor[];

  /**
   * With `reserve`, it hands out its storage to a step that writes the keys and values itself (a fused attention
   * step); without, every layer stores through `update`.
   */
  readonly reserve: ((layer: number) => { k: Tensor; v: Tensor }) | undefined;

  constructor(config: CacheShape, batch = 1, options: { readonly reserve?: boolean } = {}) {
    this.reserve = options.reserve ? (layer) => this.#views(layer) : undefined;
    const shape = [batch, config.maxSeqLen, config.numKvHeads, headDim(config)];
    this.#keys = Array.from({ length: config.numLayers }, () => keep(zeros(shape)));
    this.#values = Array.from({ length: config.numLayers }, () => keep(zeros(shape)));
  }

  update(layer: number, k: Tensor, v: Tensor, offset: number): { k: Tensor; v: Tensor } {
    writeSlice(this.#keys[layer], k, [0, offset, 0, 0]);
    writeSlice(this.#values[layer], v, [0, offset, 0, 0]);
    return this.#views(layer);
  }

  #views(layer: number): { k: Tensor; v: Tensor } {
    return {
      k: this.#keys[layer].view(this.#keys[layer].shape),
      v: this.#values[layer].view(this.#values[layer].shape),
    };
  }

  dispose(): void {
    for (const t of [...this.#keys, ...this.#values]) t.dispose();
  }
}
