import { concat, keep, scope, type Tensor } from '@loom/tensor';
import type { CrossAttention, CrossKV } from '../layers/cross-attention';

/**
 * The second cache of an encoder–decoder, beside the self-attention KV cache: every decoder layer's
 * cross-attention keys and values [B, S, Hkv, hd], projected from the encoder output once per source and read by
 * every decoding step. Unlike the self-attention cache it never grows. Its tensors live outside scopes; call
 * `dispose()` when the generation is done.
 */
export class CrossKVCache {
  readonly #layers: readonly CrossKV[];

  private constructor(layers: readonly CrossKV[]) {
    this.#layers = layers;
  }

  /**
   * Projects memory [B, S, dim] through each layer's key and value weights (the only time they run);
   * `keyLengths` (one per row, or empty for all S) hides right-padded source positions.
   */
  static fromMemory(
    layers: readonly CrossAttention[],
    memory: Tensor,
    keyLengths: readonly number[] = [],
  ): CrossKVCache {
    const kvs = scope(() => layers.map((layer) => layer.memoryKV(memory, keyLengths)));
    return new CrossKVCache(kvs.map((kv) => ({ ...kv, k: keep(kv.k), v: keep(kv.v) })));
  }

  /** Rows in the batch of sources. */
  get batch(): number {
    return this.#layers[0]?.k.shape[0] ?? 0;
  }

  /** Decoder layers held. */
  get numLayers(): number {
    return this.#layers.length;
  }

  /** Keys and values of decoder layer `layer`. */
  layer(layer: number): CrossKV {
    const kv = this.#layers[layer];
    if (!kv) {
      throw new Error(
        `CrossKVCache: layer ${layer} is not held; this cache holds layers 0..${this.numLayers - 1}`,
      );
    }
    return kv;
  }

  /**
   * A cache whose every row is repeated `times` times in place ([r0, r0, ..., r1, r1, ...]), for decoding
   * `times` hypotheses per source (beam search) without projecting the source again.
   */
  repeat(times: number): CrossKVCache {
    if (!Number.isInteger(times) || times < 1) {
      throw new Error(`CrossKVCache.repeat: times must be a positive integer, got ${times}`);
    }
    const rows = (t: Tensor) =>
      keep(
        scope(() => {
          const [b, s, h, hd] = t.shape;
          const copies = Array.from({ length: times }, () => t.reshape([b, 1, s, h, hd])); // [B, 1, S, Hkv, hd]
          return concat(copies, 1).reshape([b * times, s, h, hd]); // [B·times, S, Hkv, hd]
        }),
      );
    const lengths = (kv: CrossKV) => kv.keyLengths.flatMap((n) => Array<number>(times).fill(n));
    return new CrossKVCache(
      this.#layers.map((kv) => ({ k: rows(kv.k), v: rows(kv.v), keyLengths: lengths(kv) })),
    );
  }

  /** Frees the keys and values. */
  dispose(): void {
    for (const { k, v } of this.#layers) {
      k.dispose();
      v.dispose();
    }
  }
}
