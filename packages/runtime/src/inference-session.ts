import {
  cacheForModel,
  canTruncate,
  checkMemoryLimits,
  type MemoryLimits,
  type ModelKVCache,
  RingKVCache,
} from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { scope, type Tensor, tensor } from '@loom/tensor';
import type { DecodingSession } from './decoding-session';

export interface InferenceSessionOptions {
  /**
   * Positions the session holds (default and maximum: the model's maxSeqLen). A sliding-window model with a window
   * shorter than this keeps only the window's keys and values, in a ring.
   */
  readonly capacity?: number;
  /**
   * Memory the cache (and one prefill of its whole capacity) may take, checked by arithmetic before anything is
   * allocated: a `MemoryLimitError` gives the bytes it would take (default: no limit).
   */
  readonly limits?: MemoryLimits;
}

/**
 * One sequence being decoded: a model, its key/value cache and the token ids the cache holds. `feed` runs new
 * tokens through the model in one forward pass (a prefill when there are many, a decode step for one) and gives
 * the logits of the last of them only: the output projection runs on that one hidden row.
 *
 * The cache is `cacheForModel`'s: a ring of W slots for a model whose `slidingWindow` W is shorter than the
 * capacity, so its memory stays flat however long the sequence grows.
 */
export class InferenceSession implements DecodingSession {
  #cache: ModelKVCache;
  readonly #tokens: number[] = [];
  readonly #limits: MemoryLimits;
  readonly #capacity: number;

  constructor(
    readonly model: TransformerLM,
    options: InferenceSessionOptions = {},
  ) {
    const { maxSeqLen } = model.config;
    const capacity = options.capacity ?? maxSeqLen;
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > maxSeqLen) {
      throw new Error(
        `InferenceSession: capacity must be an integer in [1, ${maxSeqLen}] (the model's maxSeqLen), got ${capacity}`,
      );
    }
    this.#limits = options.limits ?? {};
    checkMemoryLimits(model.config, capacity, this.#limits);
    this.#capacity = capacity;
    this.#cache = this.#newCache();
  }

  /** The keys and values of the tokens so far (of the last W of them in a sliding-window model's ring). */
  get cache(): ModelKVCache {
    return this.#cache;
  }

  /** The token ids whose keys and values are cached, in order. */
  get tokens(): readonly number[] {
    return this.#tokens;
  }

  /** Positions the session holds in all. */
  get capacity(): number {
    return this.#capacity;
  }

  /** The model's maxSeqLen. */
  get maxSeqLen(): number {
    return this.model.config.maxSeqLen;
  }

  /** Positions still free. */
  get remaining(): number {
    return this.#capacity - this.#tokens.length;
  }

  /**
   * Appends `tokens` to the sequence and returns the logits [vocabSize] predicting the token after the last of
   * them; dispose them when read. Nothing is appended when it throws.
   */
  feed(tokens: readonly number[]): Tensor {
    const { vocabSize } = this.model.config;
    const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (bad >= 0) {
      throw new Error(
        `InferenceSession.feed: token ${bad} is ${tokens[bad]}; ids must be integers in [0, ${vocabSize}) (the model's vocabulary)`,
      );
    }
    if (tokens.length === 0) throw new Error('InferenceSession.feed: expected at least one token, got none');
    if (tokens.length > this.remaining) {
      throw new Error(
        `InferenceSession.feed: ${tokens.length} tokens do not fit: the cache holds ${this.#tokens.length} of ` +
          `${this.#capacity} positions; truncate the session or use a larger capacity`,
      );
    }
    const offset = this.#tokens.length;
    const steps = tokens.length;
    try {
      const logits = scope(() => {
        const ids = tensor(Int32Array.from(tokens), [1, steps], { backend: this.model.backend }); // [1, T]
        const last = this.model.hiddenLast(ids, { offset, cache: this.cache }); // [1, 1, dim]
        return this.model.project(last).reshape([vocabSize]); // [vocab]
      });
      this.#tokens.push(...tokens);
      return logits;
    } catch (error) {
      // Layers of a ring that stored the new keys before the failure may have overwritten slots still needed.
      if (this.#cache instanceof RingKVCache && offset + steps > this.#cache.window) this.#refill(offset);
      else this.#cache.truncate(offset);
      throw error;
    }
  }

  /**
   * Forgets every token from position `length` on, so the sequence can continue differently from there. A ring that
   * no longer holds what the window needs at `length` (it wrapped since) is refilled: the first `length` tokens
   * run through the model again, into a new ring (should that throw, the session is left empty).
   */
  truncate(length: number): void {
    if (!Number.isInteger(length) || length < 0 || length > this.#tokens.length) {
      throw new Error(
        `InferenceSession.truncate: length must be an integer in [0, ${this.#tokens.length}] (the tokens held), got ${length}`,
      );
    }
    if (canTruncate(this.#cache, length)) {
      this.#cache.truncate(length);
      this.#tokens.length = length;
    } else {
      this.#refill(length);
    }
  }

  /** An independent copy of the sequence so far (a fork). */
  clone(): InferenceSession {
    const copy = new InferenceSession(this.model, { capacity: this.#capacity, limits: this.#limits });
    copy.#cache.dispose();
    copy.#cache = this.#cache.clone();
    copy.#tokens.push(...this.#tokens);
    return copy;
  }

  /** Frees the cache. */
  dispose(): void {
    this.#cache.dispose();
  }

  #newCache(): ModelKVCache {
    return cacheForModel(this.model.config, { capacity: this.#capacity, backend: this.model.backend });
  }

  /** Replaces the cache by a new one holding the first `length` tokens, run through the model again. */
  #refill(length: number): void {
    const kept = this.#tokens.slice(0, length);
    this.#cache.dispose();
    this.#cache = this.#newCache();
    this.#tokens.length = 0;
    if (kept.length > 0) this.feed(kept).dispose();
  }
}
