import { gather, type Tensor } from '@loom/tensor';
import { normalInit } from '../init';
import { Module } from '../module';

/** Rows of a [count, dim] table picked by i32 ids. */
export class Embedding extends Module {
  readonly weight: Tensor;

  constructor(count: number, dim: number, std: number, seed: number) {
    super();
    this.weight = this.addParam('weight', normalInit([count, dim], std, seed, this.backend));
  }

  /** ids [...] -> [..., dim]. */
  forward(ids: Tensor): Tensor {
    return gather(this.weight, ids);
  }
}
