import { rope, type Tensor } from '@loom/tensor';
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

  /** x [B, T, H, headDim] whose first row is at position `offset`. */
  forward(x: Tensor, offset: number): Tensor {
    const { inverseFrequencies, scale } = this.#fixed ?? ropeFrequencies(this.spec, offset + x.shape[1]);
    return rope(x, { offset, inverseFrequencies, scale });
  }
}
