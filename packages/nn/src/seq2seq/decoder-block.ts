import { scope, type Tensor } from '@loom/tensor';
import type { TransformerConfig } from '../config';
import type { ForwardContext } from '../kv-store';
import { SelfAttention } from '../layers/attention';
import { makeNorm } from '../layers/block';
import { CrossAttention, type CrossKV } from '../layers/cross-attention';
import { GeluMLP, SwiGLUFeedForward } from '../layers/feed-forward';
import type { LayerNorm, RMSNorm } from '../layers/norm';
import { Module } from '../module';

/** Initialisation of a block's weights, as TransformerLM's blocks take it. */
interface BlockInit {
  readonly std: number;
  readonly residualStd: number;
  readonly seeds: () => number;
  readonly dropout: number;
}

/**
 * One decoder block of an encoder–decoder, pre-norm: masked self-attention (with the self-attention KV cache
 * of `ctx`), then cross-attention reading the source's keys and values, then the feed-forward, each added to
 * the residual stream.
 */
export class CrossDecoderBlock extends Module {
  readonly attention: SelfAttention;
  readonly crossAttention: CrossAttention;
  readonly feedForward: SwiGLUFeedForward | GeluMLP;
  readonly attentionNorm: RMSNorm | LayerNorm;
  readonly crossNorm: RMSNorm | LayerNorm;
  readonly ffnNorm: RMSNorm | LayerNorm;

  constructor(config: TransformerConfig, layer: number, init: BlockInit) {
    super();
    this.attentionNorm = this.addChild('attention_norm', makeNorm(config));
    this.attention = this.addChild('attention', new SelfAttention(config, layer, init));
    this.crossNorm = this.addChild('cross_norm', makeNorm(config));
    this.crossAttention = this.addChild('cross_attention', new CrossAttention(config, init));
    this.ffnNorm = this.addChild('ffn_norm', makeNorm(config));
    const ffn = config.preset === 'llama' ? new SwiGLUFeedForward(config, init) : new GeluMLP(config, init);
    this.feedForward = this.addChild('feed_forward', ffn);
  }

  /** x [B, T, dim] with the source's cross keys and values of this layer -> [B, T, dim]. */
  forward(x: Tensor, cross: CrossKV, ctx: ForwardContext): Tensor {
    return scope(() => {
      const h = x.add(this.attention.forward(this.attentionNorm.forward(x), ctx));
      const c = h.add(this.crossAttention.forward(this.crossNorm.forward(h), cross));
      return c.add(this.feedForward.forward(this.ffnNorm.forward(c)));
    });
  }
}
