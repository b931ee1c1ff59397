import type { HalfWeight, ProductWeight, QuantizedWeight, Tensor } from '@loom/tensor';
import { weightRows } from '@loom/tensor';
import { normalInit } from '../init';
import { Module } from '../module';
import { CompactCopy } from './compact-copy';

/**
 * Rows of a [count, dim] table picked by i32 ids. With `quantized` set the lookups decode rows of that compact copy
 * of the table (a quantized or 16-bit checkpoint's), so the f32 `weight` may be freed (`releaseWeight`).
 */
export class Embedding extends Module {
  readonly weight: Tensor;
  /** A compact copy of `weight` [count, dim] the lookups read when set (see `useQuantized`). */
  readonly #compact: CompactCopy;

  constructor(count: number, dim: number, std: number, seed: number) {
    super();
    this.weight = this.addParam('weight', normalInit([count, dim], std, seed, this.backend));
    this.#compact = new CompactCopy('Embedding', this.weight);
  }

  /** The compact copy of the table the lookups read, if any. */
  get quantized(): QuantizedWeight | HalfWeight | undefined {
    return this.#compact.copy;
  }

  /** The table the lookups read (and a tied output projection): the compact copy where there is one, else `weight`. */
  get table(): ProductWeight {
    return this.#compact.read;
  }

  /**
   * Makes the lookups read `w`, a quantized or 16-bit form of this table (same [count, dim]); the layer takes ownership
   * and frees it on dispose (or when replaced). The lookups then have no gradient: do not train through them.
   */
  useQuantized(w: QuantizedWeight | HalfWeight): void {
    this.#compact.use(w);
  }

  /**
   * Frees the f32 table of a layer whose lookups read its compact copy: the parameter keeps its name and shape but is
   * disposed, so whatever would read its values (training, saving) fails, naming the disposed tensor.
   */
  releaseWeight(): void {
    this.#compact.releaseParam();
  }

  /** ids [...] -> [..., dim]. */
  forward(ids: Tensor): Tensor {
    return weightRows(this.table, ids);
  }

  override dispose(): void {
    this.#compact.dispose();
    super.dispose();
  }
}
