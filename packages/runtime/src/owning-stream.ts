/**
 * An async generator that owns something to release (a session and its cache): it releases it once, when the
 * stream ends, fails, or is closed by `return()` — also when `return()` comes before the first `next()`, where an
 * async generator's own `finally` never runs. A stream dropped without being closed leaves its cache to the
 * cache's finaliser (`KVCache` frees its storage when garbage-collected).
 */
export class OwningStream<T> implements AsyncGenerator<T, void> {
  readonly #events: AsyncGenerator<T, void>;
  #release: (() => void) | undefined;

  constructor(events: AsyncGenerator<T, void>, release: () => void) {
    this.#events = events;
    this.#release = release;
  }

  next(): Promise<IteratorResult<T, void>> {
    return this.#settle(this.#events.next(), false);
  }

  return(): Promise<IteratorResult<T, void>> {
    return this.#settle(this.#events.return(undefined), true);
  }

  throw(error: unknown): Promise<IteratorResult<T, void>> {
    return this.#settle(this.#events.throw(error), false);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async #settle(step: Promise<IteratorResult<T, void>>, closing: boolean): Promise<IteratorResult<T, void>> {
    try {
      const result = await step;
      if (result.done || closing) this.#close();
      return result;
    } catch (error) {
      this.#close();
      throw error;
    }
  }

  #close(): void {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
}
