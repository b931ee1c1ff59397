import { attention, scope, type Tensor } from '@loom/tensor';
import type { NormPlacement, TransformerConfig } from '../config';
import { SelfAttention } from '../layers/attention';
import { makeNorm } from '../layers/block';
import { GeluMLP, SwiGLUFeedForward } from '../layers/feed-forward';
import type { LayerNorm, RMSNorm } from '../layers/norm';
import { Module } from '../module';

/**
 * One encoder block: the decoder block's parts under the same names (attention_norm, attention, ffn_norm,
 * feed_forward), but every token attends to every valid token of its row (no causal mask). Pre-norm:
 * x + attn(norm(x)), then h + ffn(norm(h)); post-norm (BERT): norm(x + attn(x)), then norm(h + ffn(h)).
 */
export class EncoderBlock extends Module {
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

  /** Bidirectional attention over x [B, T, dim]; row b sees its first keyLengths[b] keys (all when empty). */
  #attend(x: Tensor, keyLengths: readonly number[]): Tensor {
    const projected = this.attention.project(x);
    const q = this.attention.rotate(projected.q, 0); // [B, T, H, hd]
    const k = this.attention.rotate(projected.k, 0); // [B, T, Hkv, hd]
    return this.attention.output(attention(q, k, projected.v, { mask: { kind: 'none' }, keyLengths })); // [B, T, dim]
  }

  /** x [B, T, dim] -> [B, T, dim]; `keyLengths` (one per row, or empty) hides right padding from attention. */
  forward(x: Tensor, keyLengths: readonly number[] = []): Tensor {
    return scope(() => {
      if (this.placement === 'pre') {
        const h = x.add(this.#attend(this.attentionNorm.forward(x), keyLengths));
        return h.add(this.feedForward.forward(this.ffnNorm.forward(h)));
      }
      const h = this.attentionNorm.forward(x.add(this.#attend(x, keyLengths)));
      return this.ffnNorm.forward(h.add(this.feedForward.forward(h)));
    });
  }
}
