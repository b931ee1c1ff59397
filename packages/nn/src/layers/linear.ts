import { matmul, type Tensor } from '@loom/tensor';
import { constantInit, normalInit } from '../init';
import { Module } from '../module';

export interface LinearOptions {
  readonly bias: boolean;
  /** Standard deviation of the normal initialisation. */
  readonly std: number;
  readonly seed: number;
}

/** y = x Wᵀ (+ b), with W stored [out, in] as in PyTorch and llama2.c. */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | undefined;

  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    options: LinearOptions,
  ) {
    super();
    this.weight = this.addParam(
      'weight',
      normalInit([outFeatures, inFeatures], options.std, options.seed, this.backend),
    );
    this.bias = options.bias
      ? this.addParam('bias', constantInit([outFeatures], 0, this.backend))
      : undefined;
  }

  /** x [..., in] -> [..., out]. */
  forward(x: Tensor): Tensor {
    const y = matmul(x, this.weight, { transB: true });
    if (!this.bias) return y;
    const out = y.add(this.bias);
    y.dispose();
    return out;
  }
}
