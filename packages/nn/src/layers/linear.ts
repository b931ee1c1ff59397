import { matmul, type Tensor } from '@loom/tensor';
import { constantInit, normalInit } from '../init';
import { Module } from '../module';

export interface LinearOptions {
  readonly bias: boolean;
  /** Standard deviation of the normal initialisation. */
  readonly std: number;
  readonly seed: number;
}

/** A term added to a Linear's output, computed from the same input (a LoRA adapter). */
export interface LinearAdapter {
  /** x [..., in] -> [..., out]. */
  delta(x: Tensor): Tensor;
}

/** y = x Wᵀ (+ b) (+ adapter(x)), with W stored [out, in] as in PyTorch and llama2.c. */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | undefined;
  /** Added to the output when set; its parameters are not this module's (see `applyLora`). */
  adapter: LinearAdapter | undefined = undefined;

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
    const biased = this.bias ? y.add(this.bias) : y;
    if (biased !== y) y.dispose();
    if (!this.adapter) return biased;
    const delta = this.adapter.delta(x);
    const out = biased.add(delta);
    biased.dispose();
    delta.dispose();
    return out;
  }
}
