import {
  type AttentionMask,
  attention,
  attentionStep,
  empty,
  fusedOps,
  kernelOf,
  scope,
  type Tensor,
} from '@loom/tensor';
import { headDim, qDim, qkvHasBias, type TransformerConfig } from '../config';
import type { ForwardContext, StoredKV } from '../kv-store';
import { Module } from '../module';
import { Dropout } from './dropout';
import { Linear } from './linear';
import { RMSNorm } from './norm';
import { RotaryEmbedding } from './rotary';

/** Which positions a call's output covers: all of them, or the last one only. */
export type OutputRows = 'all' | 'last';

/** Queries, keys and values of one call, split into heads, before RoPE. */
export interface HeadProjections {
  /** [B, T, H, hd] */
  readonly q: Tensor;
  /** [B, T, Hkv, hd] */
  readonly k: Tensor;
  /** [B, T, Hkv, hd] */
  readonly v: Tensor;
}

/**
 * Causal self-attention (a prefix LM's bidirectional prefix and a sliding window when asked) with numHeads query heads and numKvHeads key/value heads: multi-head,
 * grouped-query and multi-query attention are the same code. The query, key and value projections
 * have biases when `qkvHasBias(config)` (gpt2, Qwen2); with `qkNorm` (Qwen3) queries and keys pass a
 * per-head RMSNorm before RoPE.
 */
export class SelfAttention extends Module {
  readonly wq: Linear;
  readonly wk: Linear;
  readonly wv: Linear;
  readonly wo: Linear;
  readonly qNorm: RMSNorm | undefined;
  readonly kNorm: RMSNorm | undefined;
  readonly #rotary: RotaryEmbedding | undefined;
  readonly #dropout: Dropout;

  constructor(
    readonly config: TransformerConfig,
    readonly layer: number,
    init: { std: number; residualStd: number; seeds: () => number; dropout: number },
  ) {
    super();
    const hd = headDim(config);
    const { dim, numKvHeads, bias } = config;
    const projection = (out: number) =>
      new Linear(dim, out, { bias: qkvHasBias(config), std: init.std, seed: init.seeds() });
    this.wq = this.addChild('wq', projection(qDim(config)));
    this.wk = this.addChild('wk', projection(numKvHeads * hd));
    this.wv = this.addChild('wv', projection(numKvHeads * hd));
    this.wo = this.addChild(
      'wo',
      new Linear(qDim(config), dim, { bias, std: init.residualStd, seed: init.seeds() }),
    );
    this.qNorm = config.qkNorm ? this.addChild('q_norm', new RMSNorm(hd, config.normEps)) : undefined;
    this.kNorm = config.qkNorm ? this.addChild('k_norm', new RMSNorm(hd, config.normEps)) : undefined;
    this.#rotary =
      config.preset === 'llama'
        ? new RotaryEmbedding({
            headDim: hd,
            theta: config.ropeTheta,
            maxSeqLen: config.maxSeqLen,
            scaling: config.ropeScaling,
          })
        : undefined;
    this.#dropout = this.addChild('dropout', new Dropout(init.dropout, init.seeds()));
  }

  /** The projections of x [B, T, dim] split into heads, q and k through their norms (if any), before RoPE. */
  project(x: Tensor): HeadProjections {
    return { q: this.queries(x), ...this.keysValues(x) };
  }

  /** The queries of x [B, T, dim] -> [B, T, H, hd], through their norm (if any), before RoPE. */
  queries(x: Tensor): Tensor {
    const [b, t] = x.shape;
    const q = this.wq.forward(x).reshape([b, t, this.config.numHeads, headDim(this.config)]); // [B, T, H, hd]
    return this.qNorm ? this.qNorm.forward(q) : q;
  }

  /** The keys (through their norm, if any, before RoPE) and values of x [B, T, dim], each [B, T, Hkv, hd]. */
  keysValues(x: Tensor): { readonly k: Tensor; readonly v: Tensor } {
    const [b, t] = x.shape;
    const heads = [b, t, this.config.numKvHeads, headDim(this.config)];
    const k = this.wk.forward(x).reshape(heads); // [B, T, Hkv, hd]
    const v = this.wv.forward(x).reshape(heads); // [B, T, Hkv, hd]
    return { k: this.kNorm ? this.kNorm.forward(k) : k, v };
  }

  /**
   * RoPE (llama) of heads [B, T, heads, hd] whose first row is at `offset` (or entry b's at offset[b]); unchanged for
   * learned positions.
   */
  rotate(x: Tensor, offset: number | readonly number[]): Tensor {
    return this.#rotary ? this.#rotary.forward(x, offset) : x;
  }

  /** Attention output [B, T, H, hd] -> [B, T, dim] through the output projection (and dropout). */
  output(heads: Tensor): Tensor {
    const [b, t] = heads.shape;
    return this.#dropout.forward(this.wo.forward(heads.reshape([b, t, qDim(this.config)]))); // [B, T, dim]
  }

  /**
   * x [B, T, dim] -> [B, T, dim]; with `rows` 'last', -> [B, 1, dim]: the output of the last position only (the
   * keys and values of every position still reach the cache), for a model's last block when only the next
   * token's scores are wanted.
   */
  forward(x: Tensor, ctx: ForwardContext, rows: OutputRows = 'all'): Tensor {
    return scope(() => {
      const [b, t, dim] = x.shape;
      const lastOnly = rows === 'last' && t > 1;
      const qOffset = lastOnly ? ctx.offset + t - 1 : ctx.offset;
      const qInput = lastOnly ? x.slice([0, t - 1, 0], [b, 1, dim]) : x; // [B, T or 1, dim]
      const q = this.rotate(this.queries(qInput), qOffset); // [B, T or 1, H, hd]
      const { k: keys, v } = this.keysValues(x);
      const k = this.rotate(keys, ctx.offset); // [B, T, Hkv, hd]
      const kv = ctx.cache ? ctx.cache.update(this.layer, k, v, ctx.offset) : { k, v };
      return this.output(this.attend(q, kv, qOffset, ctx.prefixLength ?? 0)); // [B, T or 1, dim]
    });
  }

  /**
   * x + this layer's attention of norm(x) for one decode step (x [B, 1, dim]) as one fused op (`attentionStep`), which
   * writes the token's keys and values into the store itself (each projection's weight read as stored: f32, 16-bit or
   * quantized); undefined, with nothing changed, where something stands outside that op: a bias or adapter on a
   * projection, q/k norms, learned positions, active
   * dropout, or a store that does not hand out its storage. Also where the backend has no kernel for the op: its
   * composite is the separate ops plus a copy of the output.
   */
  fusedStep(x: Tensor, norm: RMSNorm, ctx: ForwardContext): Tensor | undefined {
    const [b, t] = x.shape;
    const plain = [this.wq, this.wk, this.wv, this.wo].every((l) => l.plain);
    const kernel = kernelOf(x.backend, fusedOps.attentionStep);
    const rotary = this.#rotary;
    if (
      t !== 1 ||
      !plain ||
      this.qNorm ||
      !rotary ||
      this.#dropout.active ||
      !kernel ||
      !ctx.cache?.reserve
    ) {
      return undefined;
    }
    const offset = ctx.offset;
    const stored = ctx.cache.reserve(this.layer, offset, 1);
    if (stored === undefined) return undefined;
    return scope(() => {
      const { k, v } = stored;
      const { inverseFrequencies, scale } = rotary.frequencies(offset + 1);
      const mask = maskOf(ctx.prefixLength ?? 0, k.shape[1]);
      const out = empty([b, 1, this.config.dim], { backend: x.backend }); // [B, 1, dim], all written by the step
      const weights = {
        norm: norm.weight,
        wq: this.wq.productWeight,
        wk: this.wk.productWeight,
        wv: this.wv.productWeight,
        wo: this.wo.productWeight,
      };
      attentionStep(
        out,
        x,
        weights,
        { keys: k, values: v },
        {
          offset,
          inverseFrequencies,
          ropeScale: scale,
          eps: norm.eps,
          mask,
          window: this.config.slidingWindow,
        },
      );
      return out;
    });
  }

  /**
   * Rotated queries q [B, T, H, hd] at positions offset.. over the keys a store returned, with this layer's mask:
   * causal (bidirectional over the first `prefixLength` positions, a prefix LM) within the config's sliding
   * window. -> [B, T, H, hd].
   */
  attend(q: Tensor, kv: StoredKV, offset: number, prefixLength = 0): Tensor {
    const layout = kv.layout ?? { kind: 'positions', start: 0 };
    if (layout.kind === 'slots') {
      if (q.shape[1] !== 1) {
        throw new Error(
          `SelfAttention: a store returned ring slots for ${q.shape[1]} queries; slots serve one query`,
        );
      }
      const keyLengths = new Array<number>(q.shape[0]).fill(layout.filled);
      return attention(q, kv.k, kv.v, { mask: { kind: 'none' }, keyLengths });
    }
    const mask = maskOf(prefixLength - layout.start, kv.k.shape[1]);
    return attention(q, kv.k, kv.v, {
      mask,
      offset: offset - layout.start,
      window: this.config.slidingWindow,
    });
  }
}

/**
 * The mask over `keys` stored keys whose first `prefix` (counted from the first stored) form a prefix LM's
 * bidirectional prefix: causal when none of them does.
 */
function maskOf(prefix: number, keys: number): AttentionMask {
  const length = Math.min(prefix, keys);
  return length > 0 ? { kind: 'prefix', length } : { kind: 'causal' };
}
