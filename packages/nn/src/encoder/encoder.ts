import { arange, matmul, scope, showShape, slice, softmaxCrossEntropy, type Tensor } from '@loom/tensor';
import { type ModelOptions, type TransformerConfig, validateConfig } from '../config';
import { SeedSequence } from '../init';
import { makeNorm } from '../layers/block';
import { Dropout } from '../layers/dropout';
import { Embedding } from '../layers/embedding';
import { Linear } from '../layers/linear';
import type { LayerNorm, RMSNorm } from '../layers/norm';
import { Module } from '../module';
import { EncoderBlock } from './encoder-block';

/** Standard deviation of the initialisation (BERT's and GPT-2's). */
const INIT_STD = 0.02;

/** Options of an encoder beyond its config. */
export interface EncoderOptions extends ModelOptions {
  /** Classes of the sequence-classification head on the pooled [CLS] output; absent: no such head. */
  readonly numClasses?: number;
}

/**
 * An encoder-only (BERT-style) model built from the decoder's parts: token embedding (+ learned positions for
 * the gpt2 preset; llama rotates queries and keys with RoPE), a stack of bidirectional encoder blocks and a final
 * norm. Heads: masked-language-model scores through the output projection (tied to the embedding or not, as the
 * config says) and, with `numClasses`, a sequence classifier on the first token's ([CLS]) final hidden state.
 * Parameters are named as TransformerLM's (`tok_embeddings`, `layers.0.attention.wq`, `norm`, `output`) plus
 * `classifier`. Batches may be right-padded: `lengths[b]` tokens of row b are real, the rest are hidden from
 * attention (ignore their outputs in the loss).
 */
export class TransformerEncoder extends Module {
  readonly tokEmbeddings: Embedding;
  readonly posEmbeddings: Embedding | undefined;
  readonly layers: EncoderBlock[];
  readonly norm: RMSNorm | LayerNorm;
  readonly output: Linear | undefined;
  readonly classifier: Linear | undefined;
  readonly #dropout: Dropout;

  constructor(
    readonly config: TransformerConfig,
    readonly options: EncoderOptions = {},
  ) {
    super();
    validateConfig(config);
    const { numClasses } = options;
    if (numClasses !== undefined && !(Number.isInteger(numClasses) && numClasses >= 2)) {
      throw new Error(`TransformerEncoder: numClasses must be an integer >= 2 when given, got ${numClasses}`);
    }
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
    const layers = new BlocksModule();
    this.addChild('layers', layers);
    this.layers = Array.from({ length: config.numLayers }, (_, i) =>
      layers.add(new EncoderBlock(config, i, options.norm ?? 'pre', init)),
    );
    this.norm = this.addChild('norm', makeNorm(config));
    this.output = config.tiedEmbeddings
      ? undefined
      : this.addChild(
          'output',
          new Linear(config.dim, config.vocabSize, { bias: false, std: INIT_STD, seed: seeds() }),
        );
    this.classifier =
      numClasses === undefined
        ? undefined
        : this.addChild(
            'classifier',
            new Linear(config.dim, numClasses, { bias: true, std: INIT_STD, seed: seeds() }),
          );
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, seeds()));
  }

  /** Checks tokens i32 [B, T] and the lengths of its rows; returns the lengths attention needs ([] = unpadded). */
  #checkInput(tokens: Tensor, lengths: readonly number[] | undefined): readonly number[] {
    if (tokens.rank !== 2 || tokens.dtype !== 'i32') {
      throw new Error(
        `TransformerEncoder: expected i32 tokens [batch, time], got ${tokens.dtype} ${showShape(tokens.shape)}`,
      );
    }
    const [b, t] = tokens.shape;
    if (t > this.config.maxSeqLen) {
      throw new Error(`TransformerEncoder: ${t} tokens per row exceed maxSeqLen ${this.config.maxSeqLen}`);
    }
    if (lengths === undefined) return [];
    if (lengths.length !== b) {
      throw new Error(
        `TransformerEncoder: lengths needs one entry per batch row (${b}), got ${lengths.length}`,
      );
    }
    const bad = lengths.findIndex((n) => !Number.isInteger(n) || n < 1 || n > t);
    if (bad >= 0) {
      throw new Error(
        `TransformerEncoder: lengths[${bad}] = ${lengths[bad]} must be an integer in 1..${t} (the row's real tokens, [CLS] included)`,
      );
    }
    return lengths.every((n) => n === t) ? [] : lengths;
  }

  /** Final hidden states: tokens i32 [B, T] (right-padded to T where `lengths` says) -> [B, T, dim]. */
  hidden(tokens: Tensor, lengths?: readonly number[]): Tensor {
    const keyLengths = this.#checkInput(tokens, lengths);
    return scope(() => {
      let x = this.tokEmbeddings.forward(tokens); // [B, T, dim]
      if (this.posEmbeddings) {
        const positions = arange(tokens.shape[1], 0, 1, { backend: tokens.backend, dtype: 'i32' });
        x = x.add(this.posEmbeddings.forward(positions)); // [B, T, dim] + [T, dim]
      }
      return this.encode(x, keyLengths);
    });
  }

  /** The blocks and final norm over embedded inputs x [B, T, dim] (positions already added) -> [B, T, dim]. */
  encode(x: Tensor, keyLengths: readonly number[] = []): Tensor {
    return scope(() => {
      let h = this.#dropout.forward(x);
      for (const layer of this.layers) h = layer.forward(h, keyLengths);
      return this.norm.forward(h);
    });
  }

  /** The [CLS] summary: hidden states [B, T, dim] -> the first token's [B, dim]. */
  pooled(hidden: Tensor): Tensor {
    const [b, , dim] = hidden.shape;
    return scope(() => slice(hidden, [0, 0, 0], [b, 1, dim]).reshape([b, dim])); // [B, dim]
  }

  /** Masked-language-model scores of hidden states [..., dim] -> [..., vocab]. */
  mlmLogits(hidden: Tensor): Tensor {
    return this.output
      ? this.output.forward(hidden)
      : matmul(hidden, this.tokEmbeddings.weight, { transB: true });
  }

  /** Mean cross-entropy of the masked positions: targets i32 [B, T] hold the original id there, `ignoreIndex` elsewhere. */
  mlmLoss(inputs: Tensor, targets: Tensor, lengths?: readonly number[], ignoreIndex = -100): Tensor {
    return scope(() => {
      const logits = this.mlmLogits(this.hidden(inputs, lengths)); // [B, T, V]
      const [b, t, v] = logits.shape;
      return softmaxCrossEntropy(logits.reshape([b * t, v]), targets.reshape([b * t]), ignoreIndex);
    });
  }

  /** Class scores of the pooled [CLS] output of tokens i32 [B, T] -> [B, numClasses]. */
  classifierLogits(tokens: Tensor, lengths?: readonly number[]): Tensor {
    const head = this.classifier;
    if (!head) {
      throw new Error('TransformerEncoder: this model has no classification head; build it with numClasses');
    }
    return scope(() => head.forward(this.pooled(this.hidden(tokens, lengths))));
  }

  /** Mean cross-entropy of the classifier against labels i32 [B] (each in 0..numClasses-1). */
  classifyLoss(tokens: Tensor, labels: Tensor, lengths?: readonly number[]): Tensor {
    if (labels.rank !== 1 || labels.dtype !== 'i32' || labels.shape[0] !== tokens.shape[0]) {
      throw new Error(
        `TransformerEncoder: expected i32 labels [${tokens.shape[0]}] (one per row), got ${labels.dtype} ${showShape(labels.shape)}`,
      );
    }
    return scope(() => softmaxCrossEntropy(this.classifierLogits(tokens, lengths), labels));
  }
}

/** Holds the blocks under the names layers.0, layers.1, ... */
class BlocksModule extends Module {
  #count = 0;

  add(block: EncoderBlock): EncoderBlock {
    return this.addChild(String(this.#count++), block);
  }
}
