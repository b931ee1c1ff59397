import { describe, expect, it } from 'vitest';
import {
  applyFrequencyPresencePenalties,
  applyLogitBias,
  applyRepetitionPenalty,
  countTokens,
  SamplerConfigError,
} from '../src/index';
import { row } from './helpers';

describe('applyLogitBias', () => {
  it('adds the bias of each listed token, from a record or a map', () => {
    expect(Array.from(applyLogitBias(row(0, 1, 2, 3), { 1: 2.5, 3: -1 }))).toEqual([0, 3.5, 2, 2]);
    expect(Array.from(applyLogitBias(row(0, 1, 2, 3), new Map([[0, 4]])))).toEqual([4, 1, 2, 3]);
  });

  it('bans a token with -Infinity', () => {
    expect(Array.from(applyLogitBias(row(5, 1), { 0: -Infinity }))).toEqual([-Infinity, 1]);
  });

  it('works in place and returns the same array', () => {
    const logits = row(0, 0);
    expect(applyLogitBias(logits, { 1: 1 })).toBe(logits);
    expect(logits[1]).toBe(1);
  });

  it('names bad ids and values', () => {
    expect(() => applyLogitBias(row(0, 0, 0), { 3: 1 })).toThrow(
      'logitBias holds token 3, outside the vocabulary of 3 logits (valid ids: 0 to 2)',
    );
    expect(() => applyLogitBias(row(0, 0), { 1: 200 })).toThrow(
      'logitBias[1] must be in [-100, 100] or -Infinity (a ban), got 200',
    );
    expect(() => applyLogitBias(row(0, 0), { 1: Number.POSITIVE_INFINITY })).toThrow(SamplerConfigError);
    expect(() => applyLogitBias(row(0, 0), new Map([[0.5, 1]]))).toThrow(/keys must be token ids/);
    expect(() => applyLogitBias(row(0, 0), { '-1': 1 })).toThrow(/keys must be token ids.*"-1"/);
  });
});

describe('countTokens', () => {
  it('counts every token, or only the last `window`', () => {
    expect([...countTokens([3, 1, 3, 3], undefined, 4)]).toEqual([
      [3, 3],
      [1, 1],
    ]);
    expect([...countTokens([3, 1, 3, 3], 2, 4)]).toEqual([[3, 2]]);
    expect([...countTokens([3, 1], 10, 4)]).toEqual([
      [3, 1],
      [1, 1],
    ]);
  });

  it('rejects ids outside the vocabulary and bad windows', () => {
    expect(() => countTokens([0, 9], undefined, 4)).toThrow(
      'the token history holds token 9, outside the vocabulary of 4 logits',
    );
    expect(() => countTokens([0], 0, 4)).toThrow('penaltyWindow must be an integer in [1, ∞), got 0');
  });
});

describe('applyRepetitionPenalty', () => {
  it('divides positive and multiplies non-positive logits of seen tokens, once per token', () => {
    const logits = applyRepetitionPenalty(row(2, -2, 0, 1), [0, 1, 0, 2], { penalty: 2 });
    expect(Array.from(logits)).toEqual([1, -4, 0, 1]);
  });

  it('looks only at the last `window` tokens', () => {
    const logits = applyRepetitionPenalty(row(2, -2, 0, 1), [1, 0, 3], { penalty: 2, window: 2 });
    expect(Array.from(logits)).toEqual([1, -2, 0, 0.5]);
  });

  it('penalty 1 and an empty history change nothing; a penalty < 1 encourages repeats', () => {
    expect(Array.from(applyRepetitionPenalty(row(2, -2), [0, 1], { penalty: 1 }))).toEqual([2, -2]);
    expect(Array.from(applyRepetitionPenalty(row(2, -2), [], { penalty: 3 }))).toEqual([2, -2]);
    expect(Array.from(applyRepetitionPenalty(row(2, -2), [0, 1], { penalty: 0.5 }))).toEqual([4, -1]);
  });

  it('leaves banned tokens banned', () => {
    expect(Array.from(applyRepetitionPenalty(row(-Infinity, 1), [0], { penalty: 1.5 }))).toEqual([
      -Infinity,
      1,
    ]);
  });

  it('rejects a penalty ≤ 0', () => {
    expect(() => applyRepetitionPenalty(row(1), [0], { penalty: 0 })).toThrow(
      'repetitionPenalty must be in (0, ∞), got 0; 1 turns it off',
    );
  });
});

describe('applyFrequencyPresencePenalties', () => {
  it('subtracts count · frequency + presence from each seen token', () => {
    const logits = applyFrequencyPresencePenalties(row(1, 1, 1, 1), [0, 0, 1], {
      frequency: 0.5,
      presence: 0.25,
    });
    expect(Array.from(logits)).toEqual([-0.25, 0.25, 1, 1]);
  });

  it('counts only the last `window` tokens', () => {
    const logits = applyFrequencyPresencePenalties(row(1, 1, 1, 1), [0, 0, 1, 1], {
      frequency: 0.5,
      presence: 0.25,
      window: 3,
    });
    expect(Array.from(logits)).toEqual([0.25, -0.25, 1, 1]);
  });

  it('negative penalties encourage repeats; zero changes nothing', () => {
    expect(
      Array.from(applyFrequencyPresencePenalties(row(0, 0), [1], { frequency: -1, presence: -0.5 })),
    ).toEqual([0, 1.5]);
    expect(
      Array.from(applyFrequencyPresencePenalties(row(0, 0), [1], { frequency: 0, presence: 0 })),
    ).toEqual([0, 0]);
  });

  it('rejects penalties outside [-2, 2]', () => {
    expect(() => applyFrequencyPresencePenalties(row(0), [0], { frequency: 3, presence: 0 })).toThrow(
      'frequencyPenalty must be in [-2, 2], got 3; 0 turns it off',
    );
    expect(() =>
      applyFrequencyPresencePenalties(row(0), [0], { frequency: 0, presence: Number.NaN }),
    ).toThrow('presencePenalty must be in [-2, 2], got NaN');
  });
});
