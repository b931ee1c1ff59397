import { arange, matmul, scope, showShape, softmaxCrossEntropy, type Tensor } from '@loom/tensor';
import { type ModelOptions, type TransformerConfig, validateConfig } from './config';
import { SeedSequence } from './init';
import type { ForwardContext } from './kv-store';
import { DecoderBlock, makeNorm } from './layers/block';
import { Dropout } from './layers/dropout';
import { Embedding } from './layers/embedding';
import { Linear } from './layers/linear';
import type { LayerNorm, RMSNorm } from './layers/norm';
import { Module } from './module';

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
    const init = {
      std: INIT_STD,
      residualStd: INIT_STD / Math.sqrt(2 * config.numLayers),
      seeds,
      dropout: options.dropout ?? 0,
    };
    this.tokEmbeddings = this.addChild(
      'tok_embeddings',
      new Embedding(config.vocabSize, config.dim, INIT_STD, seeds()),
    );
    this.posEmbeddings =
      config.preset === 'gpt2'
        ? this.addChild('pos_embeddings', new Embedding(config.maxSeqLen, config.dim, INIT_STD, seeds()))
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
          new Linear(config.dim, config.vocabSize, { bias: false, std: INIT_STD, seed: seeds() }),
        );
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, seeds()));
  }

  /** Final hidden states: tokens i32 [B, T] -> [B, T, dim]. */
  hidden(tokens: Tensor, ctx: ForwardContext = { offset: 0 }): Tensor {
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
    return scope(() => {
      let x = this.tokEmbeddings.forward(tokens); // [B, T, dim]
      if (this.posEmbeddings) {
        const positions = arange(t, ctx.offset, 1, { backend: tokens.backend, dtype: 'i32' });
        x = x.add(this.posEmbeddings.forward(positions)); // [B, T, dim] + [T, dim]
      }
      x = this.#dropout.forward(x);
      for (const layer of this.layers) x = layer.forward(x, ctx);
      return this.norm.forward(x);
    });
  }

  /** Output scores for hidden states [..., dim] -> [..., vocab]. */
  project(h: Tensor): Tensor {
    return this.output ? this.output.forward(h) : matmul(h, this.tokEmbeddings.weight, { transB: true });
  }

  /** tokens i32 [B, T] -> logits [B, T, vocab]. */
  forward(tokens: Tensor, ctx: ForwardContext = { offset: 0 }): Tensor {
    return scope(() => this.project(this.hidden(tokens, ctx)));
  }

  /** Mean cross-entropy of predicting targets i32 [B, T] (ignoring `ignoreIndex`). */
  loss(tokens: Tensor, targets: Tensor, ignoreIndex = -100): Tensor {
    return scope(() => {
      const logits = this.forward(tokens);
      const [b, t, v] = logits.shape;
      return softmaxCrossEntropy(logits.reshape([b * t, v]), targets.reshape([b * t]), ignoreIndex);
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
