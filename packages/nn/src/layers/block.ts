import { keep, scope, type Tensor } from '@loom/tensor';
import type { NormPlacement, TransformerConfig } from '../config';
import type { ForwardContext } from '../kv-store';
import { Module } from '../module';
import { MoeFeedForward, type MoeStats } from '../moe/moe';
import { type OutputRows, SelfAttention } from './attention';
import { GeluMLP, SwiGLUFeedForward } from './feed-forward';
import { LayerNorm, RMSNorm } from './norm';

/** The norm of a preset: RMSNorm for llama, LayerNorm for gpt2. */
export function makeNorm(config: TransformerConfig): RMSNorm | LayerNorm {
  return config.preset === 'llama'
    ? new RMSNorm(config.dim, config.normEps)
    : new LayerNorm(config.dim, config.normEps);
}

/**
 * One decoder block. Pre-norm: x + attn(norm(x)), then h + ffn(norm(h)). Post-norm:
 * norm(x + attn(x)), then norm(h + ffn(h)).
 */
export class DecoderBlock extends Module {
  readonly attention: SelfAttention;
  readonly feedForward: SwiGLUFeedForward | GeluMLP | MoeFeedForward;
  readonly attentionNorm: RMSNorm | LayerNorm;
  readonly ffnNorm: RMSNorm | LayerNorm;

  constructor(
    config: TransformerConfig,
    layer: number,
    readonly placement: NormPlacement,
    init: { std: number; residualStd: number; seeds: () => number; dropout: number },
  ) {
    super();
    this.attentionNorm = this.addChild('attention_norm', makeNorm(config));
    this.attention = this.addChild('attention', new SelfAttention(config, layer, init));
    this.ffnNorm = this.addChild('ffn_norm', makeNorm(config));
    const ffn = config.moe
      ? new MoeFeedForward(config, config.moe, init)
      : config.preset === 'llama'
        ? new SwiGLUFeedForward(config, init)
        : new GeluMLP(config, init);
    this.feedForward = this.addChild('feed_forward', ffn);
  }

  /**
   * x [B, T, dim] -> [B, T, dim]; with `rows` 'last', -> [B, 1, dim], the last position's output only (attention
   * still stores every position's keys and values). A MoE feed-forward pushes its load-balancing loss and load
   * onto `moe` when given (the caller owns those tensors).
   */
  forward(x: Tensor, ctx: ForwardContext, moe?: MoeStats[], rows: OutputRows = 'all'): Tensor {
    return scope(() => {
      const [b, t, dim] = x.shape;
      const residual = rows === 'last' && t > 1 ? x.slice([0, t - 1, 0], [b, 1, dim]) : x; // [B, T or 1, dim]
      if (this.placement === 'pre') {
        const h =
          this.#decodeAttention(x, ctx) ??
          residual.add(this.attention.forward(this.attentionNorm.forward(x), ctx, rows));
        return this.#decodeFeedForward(h, ctx) ?? h.add(this.#feedForward(this.ffnNorm.forward(h), moe));
      }
      const h = this.attentionNorm.forward(residual.add(this.attention.forward(x, ctx, rows)));
      return this.ffnNorm.forward(h.add(this.#feedForward(h, moe)));
    });
  }

  /** x + attention(attentionNorm(x)) in one fused op for a single-token decode step of a llama block; undefined otherwise. */
  #decodeAttention(x: Tensor, ctx: ForwardContext): Tensor | undefined {
    if (!(this.attentionNorm instanceof RMSNorm)) return undefined;
    return this.attention.fusedStep(x, this.attentionNorm, ctx);
  }

  /** `fusedFeedForward` for a single-token decode step (h [B, 1, dim] with a cache); undefined otherwise. */
  #decodeFeedForward(h: Tensor, ctx: ForwardContext): Tensor | undefined {
    const decoding = ctx.cache !== undefined && h.shape[1] === 1;
    return decoding ? this.fusedFeedForward(h) : undefined;
  }

  /**
   * h + ffn(ffnNorm(h)) in one fused op for a few rows of one-token steps (a decode step, or one of several sequences
   * decoded together) of a llama block whose feed-forward allows it; undefined otherwise.
   */
  fusedFeedForward(h: Tensor): Tensor | undefined {
    if (!(this.feedForward instanceof SwiGLUFeedForward) || !(this.ffnNorm instanceof RMSNorm))
      return undefined;
    return this.feedForward.fusedResidual(h, this.ffnNorm);
  }

  #feedForward(x: Tensor, moe: MoeStats[] | undefined): Tensor {
    if (!(this.feedForward instanceof MoeFeedForward) || moe === undefined)
      return this.feedForward.forward(x);
    const { output, auxLoss, load, dropped } = this.feedForward.route(x);
    moe.push({ auxLoss: keep(auxLoss), load: keep(load), dropped: keep(dropped) });
    return output;
  }
}
