import { checkMemoryLimits, KVCache, type MemoryLimits } from '@loom/kvcache';
import type { TransformerLM } from '@loom/nn';
import { scope, type Tensor, tensor } from '@loom/tensor';

export interface InferenceSessionOptions {
  /** Positions the session's cache holds (default and maximum: the model's maxSeqLen). */
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
 */
export class InferenceSession {
  #cache: KVCache;
  readonly #tokens: number[] = [];
  readonly #limits: MemoryLimits;

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
    this.#cache = KVCache.forModel(model.config, { capacity, backend: model.backend });
  }

  /** The keys and values of the tokens so far. */
  get cache(): KVCache {
    return this.#cache;
  }

  /** The token ids whose keys and values are cached, in order. */
  get tokens(): readonly number[] {
    return this.#tokens;
  }

  /** Positions still free. */
  get remaining(): number {
    return this.cache.capacity - this.#tokens.length;
  }

  /**
   * Appends `tokens` to the sequence and returns the logits [vocabSize] predicting the token after the last of
   * them; dispose them when read. Nothing is appended when it throws.
   */
  feed(tokens: readonly number[]): Tensor {
    const { vocabSize, dim } = this.model.config;
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
          `${this.cache.capacity} positions; truncate the session or use a larger capacity`,
      );
    }
    const offset = this.#tokens.length;
    const steps = tokens.length;
    try {
      const logits = scope(() => {
        const ids = tensor(Int32Array.from(tokens), [1, steps], { backend: this.model.backend }); // [1, T]
        const hidden = this.model.hidden(ids, { offset, cache: this.cache }); // [1, T, dim]
        const last = steps === 1 ? hidden : hidden.slice([0, steps - 1, 0], [1, 1, dim]); // [1, 1, dim]
        return this.model.project(last).reshape([vocabSize]); // [vocab]
      });
      this.#tokens.push(...tokens);
      return logits;
    } catch (error) {
      this.cache.truncate(offset);
      throw error;
    }
  }

  /** Forgets every token from position `length` on, so the sequence can continue differently from there. */
  truncate(length: number): void {
    this.cache.truncate(length);
    this.#tokens.length = length;
  }

  /** An independent copy of the sequence so far (a fork). */
  clone(): InferenceSession {
    const copy = new InferenceSession(this.model, { capacity: this.cache.capacity, limits: this.#limits });
    copy.#cache.dispose();
    copy.#cache = this.#cache.clone();
    copy.#tokens.push(...this.#tokens);
    return copy;
  }

  /** Frees the cache. */
  dispose(): void {
    this.#cache.dispose();
  }
}
