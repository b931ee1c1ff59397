import { scope, type Tensor } from '@loom/tensor';
import type { NormPlacement, TransformerConfig } from '../config';
import type { ForwardContext } from '../kv-store';
import { Module } from '../module';
import { SelfAttention } from './attention';
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
  readonly feedForward: SwiGLUFeedForward | GeluMLP;
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
    const ffn = config.preset === 'llama' ? new SwiGLUFeedForward(config, init) : new GeluMLP(config, init);
    this.feedForward = this.addChild('feed_forward', ffn);
  }

  /** x [B, T, dim] -> [B, T, dim]. */
  forward(x: Tensor, ctx: ForwardContext): Tensor {
    return scope(() => {
      if (this.placement === 'pre') {
        const h = x.add(this.attention.forward(this.attentionNorm.forward(x), ctx));
        return h.add(this.feedForward.forward(this.ffnNorm.forward(h)));
      }
      const h = this.attentionNorm.forward(x.add(this.attention.forward(x, ctx)));
      return this.ffnNorm.forward(h.add(this.feedForward.forward(h)));
    });
  }
}
