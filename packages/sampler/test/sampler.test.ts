import { describe, expect, it } from 'vitest';
import { Rng, Sampler, sampleIndex, softmax, topLogprobs } from '../src/index';
import { logitsOf, randomLogits, row } from './helpers';

/** Pearson's chi-square statistic of observed counts against expected probabilities. */
function chiSquare(counts: number[], probs: ArrayLike<number>, draws: number): number {
  let statistic = 0;
  counts.forEach((count, i) => {
    const expected = probs[i] * draws;
    if (expected > 0) statistic += (count - expected) ** 2 / expected;
    else expect(count).toBe(0);
  });
  return statistic;
}

describe('sampleIndex', () => {
  it('inverts the cumulative distribution in id order', () => {
    const logits = logitsOf(0.25, 0.25, 0.5);
    expect(sampleIndex(logits, 0)).toBe(0);
    expect(sampleIndex(logits, 0.2)).toBe(0);
    expect(sampleIndex(logits, 0.3)).toBe(1);
    expect(sampleIndex(logits, 0.49)).toBe(1);
    expect(sampleIndex(logits, 0.51)).toBe(2);
    expect(sampleIndex(logits, 1 - 2 ** -53)).toBe(2);
  });

  it('never draws a banned token', () => {
    expect(sampleIndex(row(-Infinity, 0, -Infinity), 0)).toBe(1);
    expect(sampleIndex(row(-Infinity, 0, -Infinity), 0.999)).toBe(1);
  });

  it('rejects u outside [0, 1) and rows with nothing to draw', () => {
    expect(() => sampleIndex(row(0), 1)).toThrow('u must be in [0, 1), got 1');
    expect(() => sampleIndex(row(-Infinity), 0.5)).toThrow(/all 1 logits are -Infinity/);
  });
});

describe('Sampler: draws', () => {
  it('draws at temperature 1 with no warper exactly as sampleIndex over the penalised row does', () => {
    const logits = randomLogits(5, 3000, 4);
    const config = { seed: 9, frequencyPenalty: 0.7, presencePenalty: 0.3 };
    const sampler = new Sampler(config);
    // The same steps by hand: penalties over the seen tokens, then an inverse-CDF draw with the same generator.
    const rng = new Rng(9);
    const seen: number[] = [];
    for (let step = 0; step < 200; step++) {
      const penalised = logits.slice();
      const counts = new Map<number, number>();
      for (const t of seen) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, n] of counts) penalised[t] -= n * 0.7 + 0.3;
      const want = sampleIndex(penalised, rng.nextFloat());
      expect(sampler.sample(logits).token, `step ${step}`).toBe(want);
      seen.push(want);
    }
  });

  it('gives the same draws on a short vocabulary after a longer one (work rows reused between calls)', () => {
    const short = randomLogits(3, 50);
    const fresh = Array.from({ length: 30 }, (_, i) => sampleIndex(short, i / 30));
    sampleIndex(randomLogits(4, 5000), 0.5);
    new Sampler({ seed: 1, temperature: 0.9, topP: 0.8 }).sample(randomLogits(6, 5000));
    expect(Array.from({ length: 30 }, (_, i) => sampleIndex(short, i / 30))).toEqual(fresh);
  });

  it('draws tokens with the softmax frequencies (chi-square, 20000 draws)', () => {
    const logits = row(1, 0.5, 0, -0.5, -1, 2, -3, 0.2);
    const sampler = new Sampler({ seed: 123 });
    const draws = 20_000;
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < draws; i++) counts[sampler.sample(logits).token]++;
    // 7 degrees of freedom: the 0.999 quantile is 24.32.
    expect(chiSquare(counts, softmax(logits), draws)).toBeLessThan(24.32);
  });

  it('draws from the processed distribution (temperature, then top-k)', () => {
    const logits = row(1, 0.5, 0, -0.5, -1, 2, -3, 0.2);
    const sampler = new Sampler({ seed: 9, temperature: 0.7, topK: 3 });
    const draws = 20_000;
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < draws; i++) counts[sampler.sample(logits).token]++;
    const ban = Number.NEGATIVE_INFINITY;
    const expected = softmax(row(1 / 0.7, 0.5 / 0.7, ban, ban, ban, 2 / 0.7, ban, ban));
    // 2 degrees of freedom: the 0.999 quantile is 13.82.
    expect(chiSquare(counts, expected, draws)).toBeLessThan(13.82);
  });

  it('gives the same tokens for the same seed, other tokens for another seed, and repeats after reset()', () => {
    const config = { temperature: 0.9, topP: 0.95, repetitionPenalty: 1.1 };
    const rows = Array.from({ length: 40 }, (_, i) => randomLogits(i, 32000, 1));
    const run = (sampler: Sampler): number[] => rows.map((logits) => sampler.sample(logits).token);
    const first = new Sampler({ ...config, seed: 11 });
    const tokens = run(first);
    expect(run(new Sampler({ ...config, seed: 11 }))).toEqual(tokens);
    expect(run(new Sampler({ ...config, seed: 12 }))).not.toEqual(tokens);
    first.reset();
    expect(run(first)).toEqual(tokens);
  });

  it('uses one uniform draw per token, by inverse CDF over the processed logits', () => {
    const logits = randomLogits(5, 1000);
    const rng = new Rng(77);
    const sampler = new Sampler({ seed: 77 });
    for (let i = 0; i < 20; i++)
      expect(sampler.sample(logits).token).toBe(sampleIndex(logits, rng.nextFloat()));
  });

  it('temperature 0 is greedy: argmax after penalties, lowest id among ties', () => {
    const sampler = new Sampler({ temperature: 0, repetitionPenalty: 2 });
    expect(sampler.sample(row(1, 3, 3, 2)).token).toBe(1);
    expect(sampler.sample(row(1, 3, 3, 2)).token).toBe(2); // token 1 is now penalised to 1.5
  });

  it('leaves the caller’s logits unchanged and records what it saw', () => {
    const logits = row(0, 1, 2);
    const sampler = new Sampler({ repetitionPenalty: 1.5, topK: 1 });
    sampler.observe([0, 2]);
    const { token } = sampler.sample(logits);
    expect(Array.from(logits)).toEqual([0, 1, 2]);
    expect(token).toBe(2); // 2 / 1.5 still beats 1
    expect(sampler.seenTokens).toEqual([0, 2, 2]);
    sampler.reset();
    expect(sampler.seenTokens).toEqual([]);
  });

  it('penalises only within the window', () => {
    const sampler = new Sampler({ temperature: 0, frequencyPenalty: 2, penaltyWindow: 1 });
    sampler.observe([0, 1]);
    expect(sampler.sample(row(2, 1.5)).token).toBe(0); // only token 1 is in the window
  });

  it('works on GPT-2 sized rows', () => {
    const sampler = new Sampler({ seed: 1, topK: 50, topP: 0.9, minP: 0.05, topLogprobs: 5 });
    const logits = randomLogits(8, 50257);
    for (let i = 0; i < 20; i++) {
      const result = sampler.sample(logits);
      expect(result.token).toBeGreaterThanOrEqual(0);
      expect(result.top).toHaveLength(5);
    }
  });
});

describe('Sampler: log-probabilities', () => {
  it('reports log softmax of the penalised logits, before temperature and truncation', () => {
    const logits = row(2, 1, 0.5, -1);
    const sampler = new Sampler({ seed: 4, temperature: 0.3, topK: 2, repetitionPenalty: 2 });
    sampler.observe([0]);
    const penalised = softmax(row(1, 1, 0.5, -1));
    const { token, logprob } = sampler.sample(logits);
    expect(logprob).toBeCloseTo(Math.log(penalised[token]), 6);
  });

  it('returns the top alternatives, most likely first, with exp summing to ≤ 1', () => {
    const logits = randomLogits(6, 500);
    const { token, logprob, top } = new Sampler({ seed: 2, topLogprobs: 4 }).sample(logits);
    const probs = softmax(logits);
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a]);
    expect(top?.map((entry) => entry.token)).toEqual(order.slice(0, 4));
    top?.forEach((entry) => {
      expect(entry.logprob).toBeCloseTo(Math.log(probs[entry.token]), 6);
    });
    expect(top?.reduce((sum, entry) => sum + Math.exp(entry.logprob), 0)).toBeLessThanOrEqual(1);
    expect(logprob).toBeCloseTo(Math.log(probs[token]), 6);
    expect(logprob).toBeLessThanOrEqual(0);
  });

  it('omits `top` unless asked for', () => {
    expect(new Sampler().sample(row(0, 1)).top).toBeUndefined();
  });

  it('topLogprobs leaves out banned tokens and sums to 1 over a whole row', () => {
    const top = topLogprobs(row(0, -Infinity, 0, Math.log(2)), 10);
    expect(top.map((entry) => entry.token)).toEqual([3, 0, 2]);
    [0.5, 0.25, 0.25].forEach((p, i) => {
      expect(top[i].logprob).toBeCloseTo(Math.log(p), 7);
    });
    expect(top.reduce((sum, entry) => sum + Math.exp(entry.logprob), 0)).toBeCloseTo(1, 12);
    expect(topLogprobs(row(1, 2), 0)).toEqual([]);
  });
});

describe('Sampler: bad input', () => {
  it('names invalid logits', () => {
    const sampler = new Sampler();
    expect(() => sampler.sample(row(0, Number.NaN))).toThrow(
      /logits\[1\] is NaN; logits must be finite or -Infinity/,
    );
    expect(() => sampler.sample(row(Infinity))).toThrow(/logits\[0\] is Infinity/);
    expect(() => sampler.sample(new Float32Array(0))).toThrow('Sampler.sample: the logits row is empty');
  });

  it('says so when the bias bans every token', () => {
    const sampler = new Sampler({ logitBias: { 0: -Infinity, 1: -Infinity } });
    expect(() => sampler.sample(row(1, 2))).toThrow(/banned every token/);
  });

  it('names a history token outside the vocabulary', () => {
    const sampler = new Sampler({ repetitionPenalty: 1.2 });
    sampler.observe([7]);
    expect(() => sampler.sample(row(1, 2))).toThrow(
      /token history holds token 7, outside the vocabulary of 2 logits/,
    );
    expect(() => sampler.observe([-1])).toThrow('Sampler.observe: token ids are integers ≥ 0, got -1');
  });
});
