import { matmul, scope, showShape, softmaxCrossEntropy, type Tensor } from '@loom/tensor';
import { SeedSequence } from '../init';
import { Embedding } from '../layers/embedding';
import { Linear } from '../layers/linear';
import { RMSNorm } from '../layers/norm';
import { Module } from '../module';
import { MambaBlock } from './block';
import { type MambaConfig, validateMambaConfig } from './config';
import { MambaState } from './state';

/** Standard deviation of the token embedding's initialisation (Mamba's, as GPT-2's). */
const EMBEDDING_STD = 0.02;

/** Options of a MambaLM that are not part of its weights' shape. */
export interface MambaModelOptions {
  /** Base seed of the weight initialisation. */
  readonly seed?: number;
}

/**
 * A Mamba language model: token embedding, a stack of Mamba blocks (each x + mixer(RMSNorm(x))),
 * a final RMSNorm and the output projection (tied to the embedding or not). `forward(tokens)`
 * gives logits like TransformerLM's; `prefill`/`step` generate with a fixed-size `MambaState`
 * instead of a KV cache.
 */
export class MambaLM extends Module {
  readonly embedding: Embedding;
  readonly layers: MambaBlock[];
  readonly normF: RMSNorm;
  readonly lmHead: Linear | undefined;

  constructor(
    readonly config: MambaConfig,
    options: MambaModelOptions = {},
  ) {
    super();
    validateMambaConfig(config);
    const seeds = new SeedSequence(options.seed ?? 1337);
    this.embedding = this.addChild(
      'embedding',
      new Embedding(config.vocabSize, config.dim, EMBEDDING_STD, seeds.next()),
    );
    const layers = this.addChild('layers', new BlockList());
    this.layers = Array.from({ length: config.numLayers }, () => layers.add(new MambaBlock(config, seeds)));
    this.normF = this.addChild('norm_f', new RMSNorm(config.dim, config.normEps));
    this.lmHead = config.tiedEmbeddings
      ? undefined
      : this.addChild(
          'lm_head',
          new Linear(config.dim, config.vocabSize, { bias: false, std: EMBEDDING_STD, seed: seeds.next() }),
        );
  }

  /** The vocabulary size, for generators that check their tokenizer. */
  get vocabSize(): number {
    return this.config.vocabSize;
  }

  #checkTokens(tokens: Tensor, where: string): void {
    if (tokens.rank !== 2 || tokens.dtype !== 'i32' || tokens.shape[1] < 1) {
      throw new Error(
        `MambaLM.${where}: expected i32 tokens [batch, time] with time >= 1, got ${tokens.dtype} ${showShape(tokens.shape)}`,
      );
    }
  }

  /** Output scores for hidden states [..., dim] -> [..., vocab]. */
  project(h: Tensor): Tensor {
    return this.lmHead ? this.lmHead.forward(h) : matmul(h, this.embedding.weight, { transB: true });
  }

  /** Final hidden states from the start of a sequence: tokens i32 [B, T] -> [B, T, dim]. */
  hidden(tokens: Tensor): Tensor {
    this.#checkTokens(tokens, 'hidden');
    return scope(() => {
      let x = this.embedding.forward(tokens); // [B, T, dim]
      for (const layer of this.layers) x = layer.forward(x);
      return this.normF.forward(x);
    });
  }

  /** tokens i32 [B, T] -> logits [B, T, vocab]. */
  forward(tokens: Tensor): Tensor {
    return scope(() => this.project(this.hidden(tokens)));
  }

  /** Mean cross-entropy of predicting targets i32 [B, T] (ignoring `ignoreIndex`). */
  loss(tokens: Tensor, targets: Tensor, ignoreIndex = -100): Tensor {
    return scope(() => {
      const logits = this.forward(tokens);
      const [b, t, v] = logits.shape;
      return softmaxCrossEntropy(logits.reshape([b * t, v]), targets.reshape([b * t]), ignoreIndex);
    });
  }

  /** A fresh generation state (zeros) for `batch` sequences. */
  newState(batch = 1): MambaState {
    return new MambaState(this.config, batch, this.backend);
  }

  /**
   * Runs tokens i32 [B, T] on from `state`, updating it in place, and returns the logits of the
   * last position [B, vocab]. A prompt (T > 1) and a decode step (T = 1) are the same call;
   * splitting a sequence into any pieces gives the same logits as one piece.
   */
  prefill(tokens: Tensor, state: MambaState): Tensor {
    this.#checkTokens(tokens, 'prefill');
    const [batch, steps] = tokens.shape;
    if (batch !== state.batch || state.config !== this.config) {
      throw new Error(
        `MambaLM.prefill: the state was made for ${state.batch} sequences of another model or batch; got tokens ${showShape(tokens.shape)} — make it with model.newState(${batch})`,
      );
    }
    const logits = scope(() => {
      let x = this.embedding.forward(tokens); // [B, T, dim]
      for (const [i, layer] of this.layers.entries()) {
        const out = layer.forwardFrom(x, state.layers[i]);
        state.update(i, out.conv, out.ssm);
        x = out.y;
      }
      const last = x.slice([0, steps - 1, 0], [batch, 1, this.config.dim]).reshape([batch, this.config.dim]); // [B, dim]
      return this.project(this.normF.forward(last)); // [B, vocab]
    });
    state.advance(steps);
    return logits;
  }

  /** One decode step: tokens i32 [B, 1] -> logits [B, vocab], updating `state`. */
  step(tokens: Tensor, state: MambaState): Tensor {
    if (tokens.rank !== 2 || tokens.shape[1] !== 1) {
      throw new Error(
        `MambaLM.step: expected one token per sequence, [batch, 1], got ${showShape(tokens.shape)}`,
      );
    }
    return this.prefill(tokens, state);
  }
}

/** Holds the blocks under the names layers.0, layers.1, ... */
class BlockList extends Module {
  #count = 0;

  add(block: MambaBlock): MambaBlock {
    return this.addChild(String(this.#count++), block);
  }
}
