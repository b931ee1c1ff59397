import { scope, swiglu, swigluBlock, type Tensor } from '@loom/tensor';
import type { TransformerConfig } from '../config';
import { Module } from '../module';
import { Dropout } from './dropout';
import { Linear } from './linear';
import type { RMSNorm } from './norm';

interface FeedForwardInit {
  readonly std: number;
  readonly residualStd: number;
  readonly seeds: () => number;
  readonly dropout: number;
}

/** llama feed-forward: w2(silu(w1 x) * w3 x). */
export class SwiGLUFeedForward extends Module {
  readonly w1: Linear;
  readonly w2: Linear;
  readonly w3: Linear;
  readonly #dropout: Dropout;

  constructor(config: TransformerConfig, init: FeedForwardInit) {
    super();
    const { dim, hiddenDim, bias } = config;
    this.w1 = this.addChild('w1', new Linear(dim, hiddenDim, { bias, std: init.std, seed: init.seeds() }));
    this.w2 = this.addChild(
      'w2',
      new Linear(hiddenDim, dim, { bias, std: init.residualStd, seed: init.seeds() }),
    );
    this.w3 = this.addChild('w3', new Linear(dim, hiddenDim, { bias, std: init.std, seed: init.seeds() }));
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, init.seeds()));
  }

  forward(x: Tensor): Tensor {
    return scope(() =>
      this.#dropout.forward(this.w2.forward(swiglu(this.w1.forward(x), this.w3.forward(x)))),
    );
  }

  /**
   * h + forward(norm(h)) as one fused op (`swigluBlock`) when nothing else stands between them: no bias,
   * adapter or quantized weight on the three linears and no active dropout; undefined otherwise.
   */
  fusedResidual(h: Tensor, norm: RMSNorm): Tensor | undefined {
    const plain = [this.w1, this.w2, this.w3].every((l) => l.plain);
    if (!plain || this.#dropout.active) return undefined;
    return swigluBlock(h, norm.weight, this.w1.weight, this.w3.weight, this.w2.weight, norm.eps);
  }
}

/** GPT-2 feed-forward: w2(gelu(w1 x)). */
export class GeluMLP extends Module {
  readonly w1: Linear;
  readonly w2: Linear;
  readonly #dropout: Dropout;

  constructor(config: TransformerConfig, init: FeedForwardInit) {
    super();
    const { dim, hiddenDim, bias } = config;
    this.w1 = this.addChild('w1', new Linear(dim, hiddenDim, { bias, std: init.std, seed: init.seeds() }));
    this.w2 = this.addChild(
      'w2',
      new Linear(hiddenDim, dim, { bias, std: init.residualStd, seed: init.seeds() }),
    );
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, init.seeds()));
  }

  forward(x: Tensor): Tensor {
    return scope(() => this.#dropout.forward(this.w2.forward(this.w1.forward(x).gelu())));
  }
}
