import { type ResolvedStopConfig, resolveStopConfig, type StopConfig } from './stop-config';
import type { StopReason } from './stop-reason';
import { StopStringMatcher } from './stop-string-matcher';

/** What one generated token gives: text to show now, and why generation stops (null: go on). */
export interface StopStep {
  text: string;
  reason: StopReason | null;
}

/**
 * Applies every stopping criterion to the tokens of one generation, in this order of precedence:
 * `eos` (the token's text is dropped), `stop-string` (text up to the stop string), `repetition`
 * and `max-tokens` (the token's text is kept). When a step stops, its text already includes
 * any held-back text, so nothing is left to flush; call `flush()` only when the caller stops
 * for its own reasons (e.g. `aborted`).
 */
export class StoppingCriteria {
  readonly config: ResolvedStopConfig;
  private readonly matcher: StopStringMatcher;
  private generated = 0;
  private lastToken = -1;
  private run = 0;
  private stopped: StopReason | null = null;

  constructor(config: StopConfig = {}) {
    this.config = resolveStopConfig(config);
    this.matcher = new StopStringMatcher(this.config.stopStrings);
  }

  /** How many tokens were pushed. */
  get count(): number {
    return this.generated;
  }

  /** Feeds the token just generated and its decoded text. */
  push(token: number, text = ''): StopStep {
    if (this.stopped !== null) {
      throw new Error(
        `StoppingCriteria: generation already stopped (${this.stopped}); call reset() to start over`,
      );
    }
    this.generated++;
    this.run = token === this.lastToken ? this.run + 1 : 1;
    this.lastToken = token;
    if (this.config.eosTokenIds.has(token)) return this.stop('eos', this.matcher.flush());
    const step = this.matcher.push(text);
    if (step.stopString !== null) return this.stop('stop-string', step.text);
    if (this.run >= this.config.repeatLimit) return this.stop('repetition', step.text + this.matcher.flush());
    if (this.generated >= this.config.maxNewTokens) {
      return this.stop('max-tokens', step.text + this.matcher.flush());
    }
    return { text: step.text, reason: null };
  }

  /** The held-back text, for a caller that ends generation itself. */
  flush(): string {
    return this.matcher.flush();
  }

  /** Starts a new generation. */
  reset(): void {
    this.matcher.reset();
    this.generated = 0;
    this.lastToken = -1;
    this.run = 0;
    this.stopped = null;
  }

  private stop(reason: StopReason, text: string): StopStep {
    this.stopped = reason;
    return { text, reason };
  }
}
