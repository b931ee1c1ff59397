import type { StopReason, TokenLogprob } from '@loom/sampler';

/** Wall-clock figures of one generation, in milliseconds and tokens per second. */
export interface GenerationTimings {
  /** From the start until the first new token was known: prefill plus choosing the token. */
  readonly timeToFirstTokenMs: number;
  /** The prefill forward pass and the first choice. */
  readonly prefillMs: number;
  /** Every decode step after the first token (forward pass of one token and the choice). */
  readonly decodeMs: number;
  /** Prompt tokens run through the model per second of prefill. */
  readonly prefillTokensPerSecond: number;
  /** Decode steps per second. */
  readonly decodeTokensPerSecond: number;
}

/** What a finished generation produced. */
export interface GenerationStats {
  readonly stopReason: StopReason;
  /** Every token of the prompt. */
  readonly promptTokens: readonly number[];
  /** Leading prompt tokens already in the cache (a chat's earlier turns), which were not run again. */
  readonly reusedTokens: number;
  /** Every generated token, the one that stopped it (such as EOS) included. */
  readonly tokens: readonly number[];
  /** The generated text (stop strings and EOS excluded). */
  readonly text: string;
  /** Times the window slid because the context was full (`contextShift`); absent or 0 when it never did. */
  readonly contextShifts?: number;
  readonly timings: GenerationTimings;
}

/**
 * A streamed generation: a `token` event per generated token with the text it completes (text can lag behind
 * tokens while a UTF-8 character or a possible stop string is incomplete), then one `done` event with the
 * remaining text and the summary.
 */
export type GenerationEvent =
  | {
      readonly type: 'token';
      readonly token: number;
      readonly text: string;
      readonly logprob?: number;
      readonly top?: readonly TokenLogprob[];
      /** The logits row the token was chosen from (only with `withLogits`). */
      readonly logits?: Float32Array;
    }
  | { readonly type: 'done'; readonly text: string; readonly stats: GenerationStats };
