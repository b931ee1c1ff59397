import { argmax } from './greedy';
import { type TokenLogprob, topLogprobs } from './logprobs';
import { penalizeLogits, warpLogits } from './pipeline';
import { Rng } from './rng';
import { drawIndex, sampleIndex } from './sample-index';
import { type ResolvedSamplerConfig, resolveSamplerConfig, type SamplerConfig } from './sampler-config';
import { maxLogit, softmaxWeights } from './softmax';
import { describeValue } from './validate';

/** One sampled token. */
export interface SampleResult {
  token: number;
  /** log p(token) under the penalized distribution (after bias and penalties, before temperature and truncation). */
  logprob: number;
  /** The `topLogprobs` most likely tokens of that same distribution, most likely first. */
  top?: TokenLogprob[];
}

function checkLogitRow(logits: Float32Array): void {
  if (logits.length === 0) throw new RangeError('Sampler.sample: the logits row is empty');
  for (let i = 0; i < logits.length; i++) {
    const value = logits[i];
    if (Number.isNaN(value) || value === Number.POSITIVE_INFINITY) {
      throw new RangeError(
        `Sampler.sample: logits[${i}] is ${value}; logits must be finite or -Infinity — the model produced an invalid value`,
      );
    }
  }
}

/**
 * Samples one token per call from a row of logits: penalties (over the tokens seen so far),
 * then temperature and truncation, then an inverse-CDF draw from the seeded generator
 * (temperature 0: argmax, no draw). Holds the seen tokens and the generator state; `reset()`
 * starts over with the same seed, so a run can be repeated exactly.
 */
export class Sampler {
  readonly config: ResolvedSamplerConfig;
  private rng: Rng;
  private readonly history: number[] = [];
  private penalized = new Float32Array(0);
  private warped = new Float32Array(0);
  private weights = new Float64Array(0);

  constructor(config: SamplerConfig = {}) {
    this.config = resolveSamplerConfig(config);
    this.rng = new Rng(this.config.seed);
  }

  /** The tokens the penalties look at: the observed ones, then every sampled one. */
  get seenTokens(): readonly number[] {
    return this.history;
  }

  /** Adds tokens the sampler did not choose (the prompt, a forced token) to the seen tokens. */
  observe(tokens: Iterable<number>): void {
    for (const token of tokens) {
      if (!Number.isInteger(token) || token < 0) {
        throw new RangeError(`Sampler.observe: token ids are integers ≥ 0, got ${describeValue(token)}`);
      }
      this.history.push(token);
    }
  }

  /** Chooses the next token from one row of logits (left unchanged) and records it as seen. */
  sample(logits: Float32Array): SampleResult {
    checkLogitRow(logits);
    if (this.penalized.length !== logits.length) {
      this.penalized = new Float32Array(logits.length);
      this.warped = new Float32Array(logits.length);
      this.weights = new Float64Array(logits.length);
    }
    const penalized = this.penalized;
    penalized.set(logits);
    penalizeLogits(penalized, this.config, this.history);
    // One pass of weights e^(logit - max) gives log Σ e^logit (as logSumExp computes it; -Infinity when every token
    // is banned, as their sum is 0) and, when no warper changes the row, the weights of the draw too.
    const max = maxLogit(penalized);
    const total = softmaxWeights(penalized, this.weights, max);
    const lse = max + Math.log(total);
    if (lse === Number.NEGATIVE_INFINITY) {
      throw new RangeError(
        'Sampler.sample: logit bias and penalties banned every token; nothing is left to sample',
      );
    }
    if (!Number.isFinite(lse)) {
      throw new RangeError(
        'Sampler.sample: the penalties pushed a logit to +Infinity; use smaller penalty or bias values',
      );
    }
    const { temperature, topK, topP, minP } = this.config;
    let token: number;
    if (temperature === 0) {
      token = argmax(penalized);
    } else if (temperature === 1 && topK === 0 && topP === 1 && minP === 0) {
      token = drawIndex(this.weights, penalized.length, total, this.rng.nextFloat());
    } else {
      this.warped.set(penalized);
      token = sampleIndex(warpLogits(this.warped, this.config), this.rng.nextFloat());
    }
    this.history.push(token);
    const result: SampleResult = { token, logprob: penalized[token] - lse };
    if (this.config.topLogprobs > 0) result.top = topLogprobs(penalized, this.config.topLogprobs);
    return result;
  }

  /** Forgets the seen tokens and restarts the generator from the configured seed. */
  reset(): void {
    this.history.length = 0;
    this.rng = new Rng(this.config.seed);
  }
}
