import type { SamplerConfig, StopConfig } from '@loom/sampler';

/** How to generate: every field is optional. */
export interface GenerateOptions {
  /** Sampling settings of `@loom/sampler` (default: its defaults, temperature 1); `temperature: 0` is greedy. */
  readonly sampling?: SamplerConfig;
  /** When to stop; `eosTokenIds` defaults to the tokenizer's end tokens (see `defaultEosTokens`). */
  readonly stop?: StopConfig;
  /** Cancels the generation: it ends with the stop reason `aborted`. */
  readonly signal?: AbortSignal;
  /** Attach each step's logits row to its token event (reads the whole row back, so greedy runs on the host). */
  readonly withLogits?: boolean;
  /**
   * When the context fills: `false` (default) ends the generation with the stop reason `context-full`; `true`
   * slides the window as llama.cpp's context shift does — the leading tokens stay (BOS, a chat's system message),
   * the oldest half of the rest goes, and the kept tokens are prefilled again at positions 0.. — and counts each
   * slide in `stats.contextShifts`. When the kept lead leaves no room to slide, it stops with `context-full`.
   */
  readonly contextShift?: boolean;
}
