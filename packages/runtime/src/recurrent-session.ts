import { scope, type Tensor, tensor } from '@loom/tensor';
import type { DecodingSession } from './decoding-session';
import type { RecurrentModel, RecurrentState } from './recurrent-model';

export interface RecurrentSessionOptions {
  /** Tokens the session accepts in all (default 2^20); the state's size does not depend on it. */
  readonly capacity?: number;
}

/** The default and largest capacity of a recurrent session, in tokens. */
const MAX_CAPACITY = 2 ** 20;

/**
 * One sequence decoded by a recurrent model: its fixed-size state and the token ids fed so
 * far. `feed` runs a prompt through `prefill` and a single token through `step`; `truncate`
 * rebuilds the state by running the kept tokens again from a fresh state (a recurrent state
 * cannot be cut back).
 */
export class RecurrentSession<S extends RecurrentState> implements DecodingSession {
  readonly state: S;
  readonly capacity: number;
  readonly #tokens: number[] = [];

  constructor(
    readonly model: RecurrentModel<S>,
    options: RecurrentSessionOptions = {},
  ) {
    const capacity = options.capacity ?? MAX_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
      throw new Error(
        `RecurrentSession: capacity must be an integer in [1, ${MAX_CAPACITY}], got ${capacity}`,
      );
    }
    this.capacity = capacity;
    this.state = model.newState(1);
  }

  get tokens(): readonly number[] {
    return this.#tokens;
  }

  get remaining(): number {
    return this.capacity - this.#tokens.length;
  }

  get maxSeqLen(): number {
    return this.capacity;
  }

  feed(tokens: readonly number[]): Tensor {
    const { vocabSize } = this.model;
    const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (bad >= 0) {
      throw new Error(
        `RecurrentSession.feed: token ${bad} is ${tokens[bad]}; ids must be integers in [0, ${vocabSize}) (the model's vocabulary)`,
      );
    }
    if (tokens.length === 0) throw new Error('RecurrentSession.feed: expected at least one token, got none');
    if (tokens.length > this.remaining) {
      throw new Error(
        `RecurrentSession.feed: ${tokens.length} tokens do not fit: the session holds ${this.#tokens.length} of ${this.capacity}; use a larger capacity`,
      );
    }
    const logits = scope(() => {
      const ids = tensor(Int32Array.from(tokens), [1, tokens.length], { backend: this.model.backend }); // [1, T]
      const out =
        tokens.length === 1 ? this.model.step(ids, this.state) : this.model.prefill(ids, this.state);
      return out.reshape([vocabSize]); // [vocab]
    });
    this.#tokens.push(...tokens);
    return logits;
  }

  truncate(length: number): void {
    if (!Number.isInteger(length) || length < 0 || length > this.#tokens.length) {
      throw new Error(
        `RecurrentSession.truncate: length must be an integer in [0, ${this.#tokens.length}], got ${length}`,
      );
    }
    const kept = this.#tokens.slice(0, length);
    this.state.reset();
    this.#tokens.length = 0;
    if (kept.length > 0) this.feed(kept).dispose();
  }

  /** Frees the state. */
  dispose(): void {
    this.state.dispose();
  }
}
