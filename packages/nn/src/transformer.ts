import { arange, scope, showShape, softmaxCrossEntropy, type Tensor, weightMatmul } from '@loom/tensor';
import { type ModelOptions, type TransformerConfig, validateConfig } from './config';
import { SeedSequence } from './init';
import type { ForwardContext } from './kv-store';
import type { OutputRows } from './layers/attention';
import { DecoderBlock, makeNorm } from './layers/block';
import { Dropout } from './layers/dropout';
import { Embedding } from './layers/embedding';
import { Linear } from './layers/linear';
import type { LayerNorm, RMSNorm } from './layers/norm';
import { Module } from './module';
import { DEFAULT_AUX_LOSS_COEF } from './moe/config';
import type { MoeStats } from './moe/moe';

/** Standard deviation of GPT-2's initialisation. */
const INIT_STD = 0.02;

/**
 * A decoder-only language model: token embedding (+ learned positions for gpt2), a stack of
 * decoder blocks, a final norm and the output projection (tied to the embedding or not).
 * Weights start as GPT-2 does: normal(0, 0.02), residual projections scaled by 1/sqrt(2·layers).
 */
export class TransformerLM extends Module {
  readonly tokEmbeddings: Embedding;
  readonly posEmbeddings: Embedding | undefined;
  readonly layers: DecoderBlock[];
  readonly norm: RMSNorm | LayerNorm;
  readonly output: Linear | undefined;
  readonly #dropout: Dropout;

  constructor(
    readonly config: TransformerConfig,
    readonly options: ModelOptions = {},
  ) {
    super();
    validateConfig(config);
    const seq = new SeedSequence(options.seed ?? 1337);
    const seeds = () => seq.next();
    const std = options.init === 'zeros' ? 0 : INIT_STD;
    const init = {
      std,
      residualStd: std / Math.sqrt(2 * config.numLayers),
      seeds,
      dropout: options.dropout ?? 0,
    };
    this.tokEmbeddings = this.addChild(
      'tok_embeddings',
      new Embedding(config.vocabSize, config.dim, std, seeds()),
    );
    this.posEmbeddings =
      config.preset === 'gpt2'
        ? this.addChild('pos_embeddings', new Embedding(config.maxSeqLen, config.dim, std, seeds()))
        : undefined;
    const layers = new LayersModule();
    this.addChild('layers', layers);
    this.layers = Array.from({ length: config.numLayers }, (_, i) =>
      layers.add(new DecoderBlock(config, i, options.norm ?? 'pre', init)),
    );
    this.norm = this.addChild('norm', makeNorm(config));
    this.output = config.tiedEmbeddings
      ? undefined
      : this.addChild(
          'output',
          new Linear(config.dim, config.vocabSize, { bias: false, std, seed: seeds() }),
        );
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, seeds()));
  }

  /**
   * Final hidden states: tokens i32 [B, T] -> [B, T, dim]. With a MoE config, each block's load-balancing loss and
   * expert load are pushed onto `moe` when given (in layer order; the caller disposes them).
   */
  hidden(tokens: Tensor, ctx: ForwardContext = { offset: 0 }, moe?: MoeStats[]): Tensor {
    return this.#hidden(tokens, ctx, moe, 'all');
  }

  /**
   * The final hidden state of each sequence's last position: tokens i32 [B, T] -> [B, 1, dim], equal to the last
   * row of `hidden`. The last block runs its queries, output projection and feed-forward on that position only
   * (its keys and values still cover every position, for the cache), so a prompt's prefill skips work whose
   * rows nobody reads. A mixture-of-experts block runs on every row: its expert capacity depends on the row count.
   */
  hiddenLast(tokens: Tensor, ctx: ForwardContext = { offset: 0 }): Tensor {
    if (this.config.moe === undefined) return this.#hidden(tokens, ctx, undefined, 'last');
    return scope(() => {
      const h = this.#hidden(tokens, ctx, undefined, 'all'); // [B, T, dim]
      const [b, t, dim] = h.shape;
      return h.slice([0, t - 1, 0], [b, 1, dim]); // [B, 1, dim]
    });
  }

  #hidden(tokens: Tensor, ctx: ForwardContext, moe: MoeStats[] | undefined, rows: OutputRows): Tensor {
    if (tokens.rank !== 2 || tokens.dtype !== 'i32') {
      throw new Error(
        `TransformerLM: expected i32 tokens [batch, time], got ${tokens.dtype} ${showShape(tokens.shape)}`,
      );
    }
    const t = tokens.shape[1];
    if (ctx.offset + t > this.config.maxSeqLen) {
      throw new Error(
        `TransformerLM: positions ${ctx.offset}..${ctx.offset + t - 1} exceed maxSeqLen ${this.config.maxSeqLen}`,
      );
    }
    const prefix = ctx.prefixLength ?? 0;
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > ctx.offset + t) {
      throw new Error(
        `TransformerLM: prefixLength must be an integer in [0, ${ctx.offset + t}] (the positions up to this call's ` +
          `last, since the whole prefix must be seen at once), got ${prefix}`,
      );
    }
    return scope(() => {
      let x = this.tokEmbeddings.forward(tokens); // [B, T, dim]
      if (this.posEmbeddings) {
        const positions = arange(t, ctx.offset, 1, { backend: tokens.backend, dtype: 'i32' });
        x = x.add(this.posEmbeddings.forward(positions)); // [B, T, dim] + [T, dim]
      }
      x = this.#dropout.forward(x);
      const last = this.layers.length - 1;
      this.layers.forEach((layer, i) => {
        x = layer.forward(x, ctx, moe, i === last ? rows : 'all');
      });
      return this.norm.forward(x);
    });
  }

  /**
   * Output scores for hidden states [..., dim] -> [..., vocab]: the output layer, or the embedding's table when tied
   * (its compact copy where it has one, so a quantized checkpoint's tied projection reads the blocks).
   */
  project(h: Tensor): Tensor {
    return this.output ? this.output.forward(h) : weightMatmul(h, this.tokEmbeddings.table);
  }

  /**
   * Bytes of the weights this model holds: its parameters that are not disposed (a layer that reads a compact copy
   * may have freed its f32 weight) and the compact copies (quantized, 16-bit) its products and lookups read.
   */
  get weightBytes(): number {
    let bytes = 0;
    for (const p of this.parameters()) if (!p.isDisposed) bytes += p.bytes;
    for (const m of this.modules()) {
      if (m instanceof Linear || m instanceof Embedding) bytes += m.quantized?.bytes ?? 0;
    }
    return bytes;
  }

  /**
   * Bytes of the weights one decode step reads: `weightBytes` with the embedding's table (its compact copy where it has
   * one, which then serves in place of the f32 weight) counted whole when it is also the output projection (tied),
   * else for the one row the lookup reads.
   */
  get stepWeightBytes(): number {
    const { weight, quantized } = this.tokEmbeddings;
    const table = quantized?.bytes ?? weight.bytes;
    const held = (weight.isDisposed ? 0 : weight.bytes) + (quantized?.bytes ?? 0);
    return this.weightBytes - held + (this.output === undefined ? table : table / this.config.vocabSize);
  }

  /** tokens i32 [B, T] -> logits [B, T, vocab]. */
  forward(tokens: Tensor, ctx: ForwardContext = { offset: 0 }): Tensor {
    return scope(() => this.project(this.hidden(tokens, ctx)));
  }

  /**
   * Mean cross-entropy of predicting targets i32 [B, T] (ignoring `ignoreIndex`); `ctx` as for `forward`. With a
   * MoE config it adds `moe.auxLossCoef` times the load-balancing loss averaged over the layers.
   */
  loss(tokens: Tensor, targets: Tensor, ignoreIndex = -100, ctx: ForwardContext = { offset: 0 }): Tensor {
    return scope(() => {
      const moe: MoeStats[] = [];
      const logits = this.project(this.hidden(tokens, ctx, moe));
      const [b, t, v] = logits.shape;
      const ce = softmaxCrossEntropy(logits.reshape([b * t, v]), targets.reshape([b * t]), ignoreIndex);
      const coef = this.config.moe?.auxLossCoef ?? DEFAULT_AUX_LOSS_COEF;
      const total =
        moe.length === 0 || coef === 0
          ? ce
          : ce.add(
              moe
                .map((stats) => stats.auxLoss)
                .reduce((sum, a) => sum.add(a))
                .mul(coef / moe.length),
            );
      for (const stats of moe) for (const t of [stats.auxLoss, stats.load, stats.dropped]) t.dispose();
      return total;
    });
  }
}

/** Holds the blocks under the names layers.0, layers.1, ... */
class LayersModule extends Module {
  #count = 0;

  add(block: DecoderBlock): DecoderBlock {
    return this.addChild(String(this.#count++), block);
  }
}
