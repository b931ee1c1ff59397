import { isPlainGreedy, Sampler, type SamplerConfig, type TokenLogprob } from '@loom/sampler';
import type { Tensor } from '@loom/tensor';
import { deviceArgmax } from './device-argmax';
import { checkLogitSum } from './logit-sum-check';

/** The token chosen from one row of logits. */
export interface Choice {
  readonly token: number;
  /** log p(token) after bias and penalties (absent on the greedy device path, which reads no logits). */
  readonly logprob?: number;
  /** The likeliest alternatives, when `topLogprobs` asks for them. */
  readonly top?: readonly TokenLogprob[];
  /** The logits row the token was chosen from, when asked for. */
  readonly logits?: Float32Array;
}

/**
 * Chooses each next token. Plain greedy decoding (temperature 0, no bias, penalties or log-probabilities) takes
 * the argmax on the device and reads back one int32, 4 bytes per token; anything else reads the logits row into a
 * Float32Array for `@loom/sampler`, whose seeded generator gives the same tokens on every backend.
 */
export class TokenChooser {
  readonly sampler: Sampler;
  readonly onDevice: boolean;

  constructor(
    config: SamplerConfig,
    private readonly withLogits = false,
  ) {
    this.sampler = new Sampler(config);
    this.onDevice = isPlainGreedy(this.sampler.config) && !withLogits;
  }

  /** Tokens the penalties should count (the prompt). */
  observe(tokens: readonly number[]): void {
    this.sampler.observe(tokens);
  }

  /** The next token from logits [vocabSize] (left for the caller to dispose). */
  async choose(logits: Tensor): Promise<Choice> {
    if (this.onDevice) {
      // NaN or +Infinity anywhere makes the sum NaN or +Infinity: one more float read back instead of the row.
      const { ids, sums } = await deviceArgmax(logits);
      checkLogitSum(sums[0], 'generate');
      return { token: ids[0] };
    }
    if (logits.dtype !== 'f32') {
      throw new Error(`TokenChooser: expected float32 logits, got ${logits.dtype}`);
    }
    const row = await logits.float32Data();
    const { token, logprob, top } = this.sampler.sample(row);
    return { token, logprob, ...(top ? { top } : {}), ...(this.withLogits ? { logits: row } : {}) };
  }
}
