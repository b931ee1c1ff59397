import { rope, type Tensor } from '@loom/tensor';

/** Rotary position embedding: rotates pairs (2i, 2i+1) of each head by position · theta^(-2i/headDim). */
export class RotaryEmbedding {
  constructor(readonly theta: number) {}

  /** x [B, T, H, headDim] whose first row is at position `offset`. */
  forward(x: Tensor, offset: number): Tensor {
    return rope(x, { offset, theta: this.theta });
  }
}
