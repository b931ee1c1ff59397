import { arange, matmul, scope, showShape, softmaxCrossEntropy, type Tensor } from '@loom/tensor';
import type { ModelOptions } from '../config';
import { EncoderBlock } from '../encoder/encoder-block';
import { SeedSequence } from '../init';
import type { ForwardContext } from '../kv-store';
import { makeNorm } from '../layers/block';
import { Embedding } from '../layers/embedding';
import { Linear } from '../layers/linear';
import type { LayerNorm, RMSNorm } from '../layers/norm';
import { Module } from '../module';
import { type Seq2SeqConfig, validateSeq2SeqConfig } from './config';
import { CrossKVCache } from './cross-cache';
import { CrossDecoderBlock } from './decoder-block';
import { IGNORE_INDEX, type Seq2SeqBatch, sourceBatch } from './teacher-forcing';

/** Standard deviation of GPT-2's initialisation, as TransformerLM uses. */
const INIT_STD = 0.02;

/** Holds blocks under the names 0, 1, ... */
class Stack<M extends Module> extends Module {
  readonly blocks: M[] = [];

  add(block: M): M {
    this.blocks.push(block);
    return this.addChild(String(this.blocks.length - 1), block);
  }
}

/**
 * An encoder–decoder transformer (the original Transformer, T5): the encoder reads the source with
 * bidirectional self-attention; every decoder layer has masked self-attention over the target so far,
 * cross-attention over the encoder output and a feed-forward. One token embedding serves source and target
 * (and the output projection when `tiedEmbeddings`); gpt2 adds learned positions to each side, llama rotates
 * queries and keys of the self-attentions. Parameters are named `encoder.layers.0.attention.wq.weight`,
 * `decoder.layers.0.cross_attention.wk.weight`, ...
 */
export class EncoderDecoder extends Module {
  readonly tokEmbeddings: Embedding;
  readonly encoderPositions: Embedding | undefined;
  readonly decoderPositions: Embedding | undefined;
  readonly encoderLayers: EncoderBlock[];
  readonly encoderNorm: RMSNorm | LayerNorm;
  readonly decoderLayers: CrossDecoderBlock[];
  readonly norm: RMSNorm | LayerNorm;
  readonly output: Linear | undefined;

  constructor(
    readonly config: Seq2SeqConfig,
    readonly options: ModelOptions = {},
  ) {
    super();
    validateSeq2SeqConfig(config);
    if ((options.norm ?? 'pre') !== 'pre') {
      throw new Error(
        `EncoderDecoder: only pre-norm blocks are built, got norm '${options.norm}'; pass 'pre'`,
      );
    }
    const seq = new SeedSequence(options.seed ?? 1337);
    const seeds = () => seq.next();
    const { dim, vocabSize, maxSeqLen } = config;
    const residualStd = INIT_STD / Math.sqrt(2 * (config.encoderLayers + config.numLayers));
    const init = { std: INIT_STD, residualStd, seeds, dropout: options.dropout ?? 0 };
    this.tokEmbeddings = this.addChild('tok_embeddings', new Embedding(vocabSize, dim, INIT_STD, seeds()));
    const learned = config.preset === 'gpt2';
    const positions = (name: string) =>
      learned ? this.addChild(name, new Embedding(maxSeqLen, dim, INIT_STD, seeds())) : undefined;
    this.encoderPositions = positions('encoder_positions');
    this.decoderPositions = positions('decoder_positions');
    const encoder = this.addChild('encoder', new EncoderSide());
    this.encoderLayers = Array.from({ length: config.encoderLayers }, (_, i) =>
      encoder.layers.add(new EncoderBlock(config, i, 'pre', init)),
    );
    this.encoderNorm = encoder.setNorm(makeNorm(config));
    const decoder = this.addChild('decoder', new DecoderSide());
    this.decoderLayers = Array.from({ length: config.numLayers }, (_, i) =>
      decoder.layers.add(new CrossDecoderBlock(config, i, init)),
    );
    this.norm = this.addChild('norm', makeNorm(config));
    this.output = config.tiedEmbeddings
      ? undefined
      : this.addChild('output', new Linear(dim, vocabSize, { bias: false, std: INIT_STD, seed: seeds() }));
  }

  #checkTokens(name: string, tokens: Tensor, offset: number): void {
    if (tokens.rank !== 2 || tokens.dtype !== 'i32') {
      throw new Error(
        `EncoderDecoder: expected ${name} as i32 tokens [batch, time], got ${tokens.dtype} ${showShape(tokens.shape)}`,
      );
    }
    const t = tokens.shape[1];
    if (t < 1 || offset + t > this.config.maxSeqLen) {
      throw new Error(
        `EncoderDecoder: ${name} positions ${offset}..${offset + t - 1} must lie in [0, ${this.config.maxSeqLen}) (maxSeqLen)`,
      );
    }
  }

  /** Token embeddings (+ learned positions from `offset`): tokens i32 [B, T] -> [B, T, dim]. */
  #embed(tokens: Tensor, positions: Embedding | undefined, offset: number): Tensor {
    return scope(() => {
      const x = this.tokEmbeddings.forward(tokens); // [B, T, dim]
      if (!positions) return x;
      const at = arange(tokens.shape[1], offset, 1, { backend: tokens.backend, dtype: 'i32' });
      return x.add(positions.forward(at)); // [B, T, dim] + [T, dim]
    });
  }

  /**
   * The encoder stack over embedded sources x [B, S, dim] -> memory [B, S, dim]; `lengths` (one per row, or
   * empty for all S) hides right padding from attention.
   */
  encodeEmbedded(x: Tensor, lengths: readonly number[] = []): Tensor {
    return scope(() => {
      let h = x;
      for (const layer of this.encoderLayers) h = layer.forward(h, lengths);
      return this.encoderNorm.forward(h);
    });
  }

  /** Encodes sources i32 [B, S], right-padded past each row's `lengths` entry (empty: none) -> memory [B, S, dim]. */
  encode(source: Tensor, lengths: readonly number[] = []): Tensor {
    this.#checkTokens('source', source, 0);
    return scope(() => this.encodeEmbedded(this.#embed(source, this.encoderPositions, 0), lengths));
  }

  /** The second cache: each decoder layer's cross-attention keys and values of memory [B, S, dim]. */
  crossCache(memory: Tensor, lengths: readonly number[] = []): CrossKVCache {
    return CrossKVCache.fromMemory(
      this.decoderLayers.map((l) => l.crossAttention),
      memory,
      lengths,
    );
  }

  /** Encodes sources (token ids, right-padded with `pad` to the longest) into their cross cache, for generation. */
  sourceCache(sources: readonly (readonly number[])[], pad: number): CrossKVCache {
    return scope(() => {
      const { ids, lengths } = sourceBatch(sources, pad, this.backend);
      return this.crossCache(this.encode(ids, lengths), lengths);
    });
  }

  /** The decoder stack over embedded targets y [B, T, dim] -> final hidden states [B, T, dim]. */
  decodeEmbedded(y: Tensor, cross: CrossKVCache, ctx: ForwardContext = { offset: 0 }): Tensor {
    if (cross.numLayers !== this.decoderLayers.length) {
      throw new Error(
        `EncoderDecoder: the cross cache holds ${cross.numLayers} layers, the decoder has ${this.decoderLayers.length}; build it with this model's crossCache`,
      );
    }
    return scope(() => {
      let h = y;
      for (const [i, layer] of this.decoderLayers.entries()) h = layer.forward(h, cross.layer(i), ctx);
      return this.norm.forward(h);
    });
  }

  /** Output scores for hidden states [..., dim] -> [..., vocab]. */
  project(h: Tensor): Tensor {
    return this.output ? this.output.forward(h) : matmul(h, this.tokEmbeddings.weight, { transB: true });
  }

  /**
   * Decoder logits of targets i32 [B, T] whose first token sits at `ctx.offset` (with `ctx.cache` holding the
   * self-attention keys and values before it) -> [B, T, vocab].
   */
  decode(target: Tensor, cross: CrossKVCache, ctx: ForwardContext = { offset: 0 }): Tensor {
    this.#checkTokens('target', target, ctx.offset);
    return scope(() =>
      this.project(this.decodeEmbedded(this.#embed(target, this.decoderPositions, ctx.offset), cross, ctx)),
    );
  }

  /**
   * Teacher-forced logits: sources i32 [B, S] (with their lengths when padded), decoder inputs i32 [B, T]
   * -> [B, T, vocab].
   */
  forward(source: Tensor, target: Tensor, sourceLengths: readonly number[] = []): Tensor {
    return scope(() => {
      const cross = this.crossCache(this.encode(source, sourceLengths), sourceLengths);
      try {
        return this.decode(target, cross);
      } finally {
        cross.dispose();
      }
    });
  }

  /** Mean cross-entropy of a teacher-forced batch's labels (see `seq2seqBatch`); IGNORE_INDEX labels (padding) skipped. */
  loss(batch: Seq2SeqBatch): Tensor {
    return scope(() => {
      const logits = this.forward(batch.source.ids, batch.inputs, batch.source.lengths); // [B, T, V]
      const [b, t, v] = logits.shape;
      return softmaxCrossEntropy(logits.reshape([b * t, v]), batch.labels.reshape([b * t]), IGNORE_INDEX);
    });
  }
}

/** The encoder's blocks and final norm, under `encoder.`. */
class EncoderSide extends Module {
  readonly layers = this.addChild('layers', new Stack<EncoderBlock>());

  setNorm(norm: RMSNorm | LayerNorm): RMSNorm | LayerNorm {
    this.addChild('norm', norm);
    return norm;
  }
}

/** The decoder's blocks, under `decoder.`. */
class DecoderSide extends Module {
  readonly layers = this.addChild('layers', new Stack<CrossDecoderBlock>());
}
