import {
  type HalfWeight,
  linear,
  type ProductWeight,
  type QuantizedWeight,
  type Tensor,
  weightMatmul,
} from '@loom/tensor';
import { constantInit, normalInit } from '../init';
import { Module } from '../module';
import { CompactCopy } from './compact-copy';

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

/**
 * y = x Wᵀ (+ b) (+ adapter(x)), with W stored [out, in] as in PyTorch and llama2.c. With `quantized` set the
 * product reads that compact copy of W instead — block-quantized or 16-bit (inference on a quantized or BF16/F16
 * checkpoint); `weight` stays the parameter that training, LoRA and checkpoints see.
 */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | undefined;
  /** Added to the output when set; its parameters are not this module's (see `applyLora`). */
  adapter: LinearAdapter | undefined = undefined;
  /** Called with every input x [..., in] before the product when set (calibration statistics); x is not its to keep. */
  inputObserver: ((x: Tensor) => void) | undefined = undefined;
  /** A compact copy of `weight` [out, in] the forward product reads when set (see `useQuantized`). */
  readonly #compact: CompactCopy;

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
    this.#compact = new CompactCopy('Linear', this.weight);
  }

  /** The compact copy of the weight the product reads, if any. */
  get quantized(): QuantizedWeight | HalfWeight | undefined {
    return this.#compact.copy;
  }

  /**
   * Makes the forward product read `w`, a quantized or 16-bit form of this layer's weight (same [out, in]); the layer
   * takes ownership and frees it on dispose (or when replaced). Gradients then reach x only: do not train through it.
   */
  useQuantized(w: QuantizedWeight | HalfWeight): void {
    this.#compact.use(w);
  }

  /**
   * Frees the f32 weight of a layer whose product reads its quantized copy (inference on a quantized checkpoint): the
   * parameter keeps its name and shape but is disposed, so whatever would read its values (training, LoRA merges,
   * saving) fails, naming the disposed tensor.
   */
  releaseWeight(): void {
    this.#compact.releaseParam();
  }

  /** The weight the product reads: the compact copy where there is one, else the f32 `weight`. */
  get productWeight(): ProductWeight {
    return this.#compact.read;
  }

  /**
   * Whether `forward` is x Wᵀ on `productWeight` alone (no bias, adapter or observer), so a fused op may read that
   * weight in its place.
   */
  get plain(): boolean {
    return !this.bias && !this.adapter && !this.inputObserver;
  }

  /** x [..., in] -> [..., out]. */
  forward(x: Tensor): Tensor {
    this.inputObserver?.(x);
    const biased = this.#product(x);
    if (!this.adapter) return biased;
    const delta = this.adapter.delta(x);
    const out = biased.add(delta);
    biased.dispose();
    delta.dispose();
    return out;
  }

  /** x Wᵀ (+ b): one fused op where the weight is plain f32 and there is a bias (the backend adds it in the product). */
  #product(x: Tensor): Tensor {
    if (this.#compact.copy === undefined && this.bias) return linear(x, this.weight, this.bias);
    const y = weightMatmul(x, this.#compact.read);
    if (!this.bias) return y;
    const biased = y.add(this.bias);
    y.dispose();
    return biased;
  }

  override dispose(): void {
    this.#compact.dispose();
    super.dispose();
  }
}
