import { attention, scope, type Tensor } from '@loom/tensor';
import { headDim, qDim, qkvHasBias, type TransformerConfig } from '../config';
import { Module } from '../module';
import { Dropout } from './dropout';
import { Linear } from './linear';

/** Keys and values of one layer's cross-attention, from the encoder output: each [B, S, Hkv, hd]. */
export interface CrossKV {
  readonly k: Tensor;
  readonly v: Tensor;
  /** Valid source positions of each row (right padding hidden); empty: all S in every row. */
  readonly keyLengths: readonly number[];
}

/**
 * Cross-attention of an encoder–decoder: queries from the decoder's states, keys and values from the encoder's
 * output, no mask (every target position reads every source position) and no rotation (the encoder's states
 * already carry their positions). Keys and values depend only on the source, so `memoryKV` runs once per
 * source and its result serves every decoding step (see `CrossKVCache`).
 */
export class CrossAttention extends Module {
  readonly wq: Linear;
  readonly wk: Linear;
  readonly wv: Linear;
  readonly wo: Linear;
  readonly #dropout: Dropout;

  constructor(
    readonly config: TransformerConfig,
    init: { std: number; residualStd: number; seeds: () => number; dropout: number },
  ) {
    super();
    const { dim, numKvHeads, bias } = config;
    const projection = (out: number) =>
      new Linear(dim, out, { bias: qkvHasBias(config), std: init.std, seed: init.seeds() });
    this.wq = this.addChild('wq', projection(qDim(config)));
    this.wk = this.addChild('wk', projection(numKvHeads * headDim(config)));
    this.wv = this.addChild('wv', projection(numKvHeads * headDim(config)));
    this.wo = this.addChild(
      'wo',
      new Linear(qDim(config), dim, { bias, std: init.residualStd, seed: init.seeds() }),
    );
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, init.seeds()));
  }

  /** Keys and values of the encoder output memory [B, S, dim], split into heads; keyLengths as in CrossKV. */
  memoryKV(memory: Tensor, keyLengths: readonly number[] = []): CrossKV {
    const [b, s] = memory.shape;
    const { numKvHeads } = this.config;
    const hd = headDim(this.config);
    return {
      k: this.wk.forward(memory).reshape([b, s, numKvHeads, hd]), // [B, S, Hkv, hd]
      v: this.wv.forward(memory).reshape([b, s, numKvHeads, hd]), // [B, S, Hkv, hd]
      keyLengths,
    };
  }

  /** Decoder states x [B, T, dim] reading the source's keys and values -> [B, T, dim]. */
  forward(x: Tensor, kv: CrossKV): Tensor {
    if (kv.k.shape[0] !== x.shape[0]) {
      throw new Error(
        `CrossAttention: the decoder batch has ${x.shape[0]} rows but the source keys have ${kv.k.shape[0]}; ` +
          'repeat the cross cache to the decoder batch (CrossKVCache.repeat)',
      );
    }
    return scope(() => {
      const [b, t] = x.shape;
      const { numHeads } = this.config;
      const q = this.wq.forward(x).reshape([b, t, numHeads, headDim(this.config)]); // [B, T, H, hd]
      const heads = attention(q, kv.k, kv.v, { mask: { kind: 'none' }, keyLengths: kv.keyLengths }); // [B, T, H, hd]
      return this.#dropout.forward(this.wo.forward(heads.reshape([b, t, qDim(this.config)]))); // [B, T, dim]
    });
  }
}
