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
   * h + forward(norm(h)) as one fused op (`swigluBlock`, reading each linear's weight as stored: f32, 16-bit or
   * quantized) when nothing else stands between them: no bias or adapter on the three linears and no active
   * dropout; undefined otherwise.
   */
  fusedResidual(h: Tensor, norm: RMSNorm): Tensor | undefined {
    const plain = [this.w1, this.w2, this.w3].every((l) => l.plain);
    if (!plain || this.#dropout.active) return undefined;
    const [w1, w3, w2] = [this.w1, this.w3, this.w2].map((l) => l.productWeight);
    return swigluBlock(h, { norm: norm.weight, w1, w3, w2 }, norm.eps);
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
