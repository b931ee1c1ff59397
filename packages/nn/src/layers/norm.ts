import { layernorm, rmsnorm, type Tensor } from '@loom/tensor';
import { constantInit } from '../init';
import { Module } from '../module';

/** Root-mean-square normalisation over the last axis with a learned scale. */
export class RMSNorm extends Module {
  readonly weight: Tensor;

  constructor(
    dim: number,
    readonly eps: number,
  ) {
    super();
    this.weight = this.addParam('weight', constantInit([dim], 1, this.backend));
  }

  forward(x: Tensor): Tensor {
    return rmsnorm(x, this.weight, this.eps);
  }
}

/** Layer normalisation over the last axis with a learned scale and bias. */
export class LayerNorm extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor;

  constructor(
    dim: number,
    readonly eps: number,
  ) {
    super();
    this.weight = this.addParam('weight', constantInit([dim], 1, this.backend));
    this.bias = this.addParam('bias', constantInit([dim], 0, this.backend));
  }

  forward(x: Tensor): Tensor {
    return layernorm(x, this.weight, this.bias, this.eps);
  }
}
