import { attention, scope, type Tensor } from '@loom/tensor';
import { headDim, type TransformerConfig } from '../config';
import type { ForwardContext } from '../kv-store';
import { Module } from '../module';
import { Dropout } from './dropout';
import { Linear } from './linear';
import { RotaryEmbedding } from './rotary';

/**
 * Causal self-attention with numHeads query heads and numKvHeads key/value heads: multi-head,
 * grouped-query and multi-query attention are the same code.
 */
export class SelfAttention extends Module {
  readonly wq: Linear;
  readonly wk: Linear;
  readonly wv: Linear;
  readonly wo: Linear;
  readonly #rotary: RotaryEmbedding | undefined;
  readonly #dropout: Dropout;

  constructor(
    readonly config: TransformerConfig,
    readonly layer: number,
    init: { std: number; residualStd: number; seeds: () => number; dropout: number },
  ) {
    super();
    const hd = headDim(config);
    const { dim, numHeads, numKvHeads, bias } = config;
    const linear = (out: number, std: number) => new Linear(dim, out, { bias, std, seed: init.seeds() });
    this.wq = this.addChild('wq', linear(numHeads * hd, init.std));
    this.wk = this.addChild('wk', linear(numKvHeads * hd, init.std));
    this.wv = this.addChild('wv', linear(numKvHeads * hd, init.std));
    this.wo = this.addChild(
      'wo',
      new Linear(numHeads * hd, dim, { bias, std: init.residualStd, seed: init.seeds() }),
    );
    this.#rotary = config.preset === 'llama' ? new RotaryEmbedding(config.ropeTheta) : undefined;
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, init.seeds()));
  }

  /** x [B, T, dim] -> [B, T, dim]. */
  forward(x: Tensor, ctx: ForwardContext): Tensor {
    return scope(() => {
      const [b, t] = x.shape;
      const hd = headDim(this.config);
      const { numHeads, numKvHeads } = this.config;
      let q = this.wq.forward(x).reshape([b, t, numHeads, hd]); // [B, T, H, hd]
      let k = this.wk.forward(x).reshape([b, t, numKvHeads, hd]); // [B, T, Hkv, hd]
      const v = this.wv.forward(x).reshape([b, t, numKvHeads, hd]); // [B, T, Hkv, hd]
      if (this.#rotary) {
        q = this.#rotary.forward(q, ctx.offset);
        k = this.#rotary.forward(k, ctx.offset);
      }
      const kv = ctx.cache ? ctx.cache.update(this.layer, k, v, ctx.offset) : { k, v };
      const out = attention(q, kv.k, kv.v, { causal: true, offset: ctx.offset }).reshape([
        b,
        t,
        numHeads * hd,
      ]); // [B, T, H*hd]
      return this.#dropout.forward(this.wo.forward(out));
    });
  }
}
