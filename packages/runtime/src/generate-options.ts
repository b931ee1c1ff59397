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
}
