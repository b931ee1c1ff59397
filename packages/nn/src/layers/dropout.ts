import { rand, scope, type Tensor, where } from '@loom/tensor';
import { Module } from '../module';

/**
 * Zeroes each element with probability p while training and scales the rest by 1/(1-p).
 * Masks come from seeded draws, one new seed per call, so runs are reproducible.
 */
export class Dropout extends Module {
  #calls = 0;

  constructor(
    readonly p: number,
    readonly seed: number,
  ) {
    super();
    if (!(p >= 0 && p < 1)) throw new Error(`Dropout: p must be in [0, 1), got ${p}`);
  }

  /** Masks drawn so far: the position of this layer's stream of mask seeds. */
  get calls(): number {
    return this.#calls;
  }

  /** Continues the mask stream from a saved position (for resuming a run exactly). */
  restore(calls: number): void {
    this.#calls = calls;
  }

  /** Whether `forward` drops anything (training with p > 0); else it is the identity. */
  get active(): boolean {
    return this.training && this.p > 0;
  }

  forward(x: Tensor): Tensor {
    if (!this.active) return x.view(x.shape);
    const seed = (this.seed + Math.imul(++this.#calls, 0x9e3779b1)) >>> 0;
    return scope(() =>
      where(rand(x.shape, { seed, backend: x.backend }).ge(this.p), x.mul(1 / (1 - this.p)), 0),
    );
  }
}
