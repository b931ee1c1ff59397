import { describe, expect, it } from 'vitest';
import { penalizeLogits, processLogits, resolveSamplerConfig, warpLogits } from '../src/index';
import { kept, logitsOf, row } from './helpers';

describe('processor order', () => {
  it('applies the logit bias before the repetition penalty', () => {
    const config = resolveSamplerConfig({ logitBias: { 0: 1 }, repetitionPenalty: 2 });
    expect(penalizeLogits(row(1, 0), config, [0])[0]).toBe(1); // (1 + 1) / 2, not 1 / 2 + 1
  });

  it('applies the repetition penalty before frequency/presence penalties', () => {
    const config = resolveSamplerConfig({ repetitionPenalty: 2, frequencyPenalty: 1 });
    expect(penalizeLogits(row(2, 0), config, [0])[0]).toBe(0); // 2 / 2 - 1, not (2 - 1) / 2
  });

  it('applies temperature before top-p', () => {
    const logits = logitsOf(0.6, 0.3, 0.1);
    expect(kept(warpLogits(logits.slice(), resolveSamplerConfig({ topP: 0.55 })))).toEqual([0]);
    // At T = 10 the distribution is nearly flat, so the nucleus needs two tokens.
    expect(kept(warpLogits(logits.slice(), resolveSamplerConfig({ temperature: 10, topP: 0.55 })))).toEqual([
      0, 1,
    ]);
  });

  it('applies top-k before top-p, which renormalises over the survivors', () => {
    const config = resolveSamplerConfig({ topK: 2, topP: 0.5 });
    // After top-k the first two have 0.4 / 0.7 ≈ 0.57 and 0.43: the first alone holds 0.5.
    expect(kept(warpLogits(logitsOf(0.4, 0.3, 0.2, 0.1), config))).toEqual([0]);
  });

  it('applies temperature before min-p', () => {
    const logits = logitsOf(0.7, 0.21, 0.09); // p1 / p0 = 0.3
    expect(kept(warpLogits(logits.slice(), resolveSamplerConfig({ minP: 0.65 })))).toEqual([0]);
    // At T = 4 the ratios become 0.3^(1/4) ≈ 0.74 and (0.09 / 0.7)^(1/4) ≈ 0.60.
    expect(kept(warpLogits(logits.slice(), resolveSamplerConfig({ temperature: 4, minP: 0.65 })))).toEqual([
      0, 1,
    ]);
  });

  it('processLogits runs both stages in order, in place', () => {
    const config = resolveSamplerConfig({
      logitBias: { 2: -Infinity },
      repetitionPenalty: 2,
      temperature: 0.5,
    });
    const logits = row(4, 2, 9, 1);
    expect(processLogits(logits, config, [0])).toBe(logits);
    expect(Array.from(logits)).toEqual([0, 0, -Infinity, -2]); // penalised [2, 2, -Inf, 1], then (l - 2) / 0.5
  });

  it('the default config changes nothing', () => {
    expect(Array.from(processLogits(row(3, -1, 0.5), resolveSamplerConfig(), [0, 1, 2]))).toEqual([
      3, -1, 0.5,
    ]);
  });
});
