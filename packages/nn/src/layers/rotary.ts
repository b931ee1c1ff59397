import { concat, rope, scope, type Tensor } from '@loom/tensor';
import { type RopeFrequencies, type RopeSpec, ropeFrequencies } from '../rope-scaling';

/**
 * Rotary position embedding: rotates pairs (2i, 2i+1) of each head by position · inverse frequency i, the plain
 * theta^(-2i/headDim) or a scaled table (`RopeScaling`). The table is computed once, except for dynamic NTK
 * scaling, whose table depends on the sequence length and is recomputed for each call's offset + T.
 */
export class RotaryEmbedding {
  readonly #fixed: RopeFrequencies | undefined;

  constructor(readonly spec: RopeSpec) {
    this.#fixed = spec.scaling?.type === 'dynamic' ? undefined : ropeFrequencies(spec, spec.maxSeqLen);
  }

  /** The table (and the factor on cos and sin) for positions below `end`. */
  frequencies(end: number): RopeFrequencies {
    return this.#fixed ?? ropeFrequencies(this.spec, end);
  }

  /**
   * x [B, T, H, headDim] whose first row is at position `offset`, or, given one offset per batch entry, entry b's
   * at offset[b] (sequences at their own places, decoded together).
   */
  forward(x: Tensor, offset: number | readonly number[]): Tensor {
    if (typeof offset === 'number') {
      const { inverseFrequencies, scale } = this.frequencies(offset + x.shape[1]);
      return rope(x, { offset, inverseFrequencies, scale });
    }
    if (this.#fixed) return rope(x, { positions: offset, ...this.#fixed });
    // Dynamic scaling: each entry's table follows its own length.
    return scope(() => {
      const [, t, h, hd] = x.shape;
      const entries = offset.map((o, b) => this.forward(x.slice([b, 0, 0, 0], [1, t, h, hd]), o)); // [1, T, H, hd]
      return concat(entries, 0); // [B, T, H, hd]
    });
  }
}
