import { describe, expect, it } from 'vitest';
import {
  resolveSamplerConfig,
  resolveStopConfig,
  Sampler,
  type SamplerConfig,
  SamplerConfigError,
  StoppingCriteria,
} from '../src/index';

function errorOf(run: () => unknown): SamplerConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof SamplerConfigError) return error;
    throw error;
  }
  throw new Error('expected a SamplerConfigError');
}

describe('resolveSamplerConfig', () => {
  it('fills in neutral defaults', () => {
    expect(resolveSamplerConfig()).toEqual({
      logitBias: new Map(),
      repetitionPenalty: 1,
      frequencyPenalty: 0,
      presencePenalty: 0,
      penaltyWindow: undefined,
      temperature: 1,
      topK: 0,
      topP: 1,
      minP: 0,
      seed: 0,
      topLogprobs: 0,
    });
  });

  it('turns a logit bias record into a map', () => {
    expect(resolveSamplerConfig({ logitBias: { 50256: -Infinity, 3: 1.5 } }).logitBias).toEqual(
      new Map([
        [3, 1.5],
        [50256, -Infinity],
      ]),
    );
  });

  it.each<[SamplerConfig, string]>([
    [{ topP: 1.5 }, 'topP must be in (0, 1], got 1.5; 1 turns it off'],
    [{ topP: 0 }, 'topP must be in (0, 1], got 0; 1 turns it off'],
    [{ temperature: -0.1 }, 'temperature must be in [0, ∞), got -0.1; 0 means greedy'],
    [
      { temperature: Number.POSITIVE_INFINITY },
      'temperature must be in [0, ∞), got Infinity; 0 means greedy',
    ],
    [{ topK: 2.5 }, 'topK must be an integer in [0, ∞), got 2.5; 0 turns it off'],
    [{ topK: -1 }, 'topK must be an integer in [0, ∞), got -1; 0 turns it off'],
    [{ minP: 1.01 }, 'minP must be in [0, 1], got 1.01; 0 turns it off'],
    [{ repetitionPenalty: 0 }, 'repetitionPenalty must be in (0, ∞), got 0; 1 turns it off'],
    [{ frequencyPenalty: -3 }, 'frequencyPenalty must be in [-2, 2], got -3; 0 turns it off'],
    [{ presencePenalty: Number.NaN }, 'presencePenalty must be in [-2, 2], got NaN; 0 turns it off'],
    [{ penaltyWindow: 0 }, 'penaltyWindow must be an integer in [1, ∞), got 0; omit it for all tokens'],
    [{ seed: -1 }, 'seed must be an integer in [0, 9007199254740991], got -1'],
    [{ seed: 0.5 }, 'seed must be an integer in [0, 9007199254740991], got 0.5'],
    [{ topLogprobs: -2 }, 'topLogprobs must be an integer in [0, ∞), got -2; 0 turns it off'],
    [{ logitBias: { 7: 101 } }, 'logitBias[7] must be in [-100, 100] or -Infinity (a ban), got 101'],
    [{ logitBias: { 7: Number.NaN } }, 'logitBias[7] must be in [-100, 100] or -Infinity (a ban), got NaN'],
  ])('rejects %o', (config, message) => {
    expect(() => resolveSamplerConfig(config)).toThrow(message);
    expect(() => new Sampler(config)).toThrow(SamplerConfigError);
  });

  it('names the field on the error', () => {
    expect(errorOf(() => resolveSamplerConfig({ topP: 2 })).field).toBe('topP');
    expect(errorOf(() => resolveSamplerConfig({ logitBias: { 1: 500 } })).field).toBe('logitBias');
  });

  it('describes values of the wrong type (plain JavaScript callers)', () => {
    const config: Record<string, unknown> = { topP: '0.9' };
    expect(() => resolveSamplerConfig(config)).toThrow('topP must be in (0, 1], got "0.9" (a string)');
  });

  it('rejects fields it does not know, listing the valid ones', () => {
    const config: Record<string, unknown> = { top_p: 0.9 };
    expect(() => resolveSamplerConfig(config)).toThrow(
      "SamplerConfig has no field 'top_p'; valid fields: logitBias, repetitionPenalty",
    );
    expect(errorOf(() => resolveSamplerConfig(config)).field).toBe('top_p');
  });
});

describe('resolveStopConfig', () => {
  it('fills in defaults: no stop strings or EOS ids, no limits', () => {
    expect(resolveStopConfig()).toEqual({
      eosTokenIds: new Set(),
      stopStrings: [],
      maxNewTokens: Number.POSITIVE_INFINITY,
      repeatLimit: Number.POSITIVE_INFINITY,
    });
  });

  it('rejects bad values, naming the field', () => {
    expect(() => resolveStopConfig({ maxNewTokens: 0 })).toThrow(
      'maxNewTokens must be an integer in [1, ∞), got 0; omit it for no limit',
    );
    expect(() => resolveStopConfig({ repeatLimit: 1 })).toThrow(
      'repeatLimit must be an integer in [2, ∞), got 1; omit it to never stop',
    );
    expect(() => resolveStopConfig({ stopStrings: ['###', ''] })).toThrow(
      'stopStrings[1] must be a non-empty string, got an empty string',
    );
    expect(() => resolveStopConfig({ eosTokenIds: [2, -1] })).toThrow(
      'eosTokenIds[1] must be an integer in [0, ∞), got -1',
    );
    const config: Record<string, unknown> = { stop: ['x'] };
    expect(() => new StoppingCriteria(config)).toThrow("StopConfig has no field 'stop'");
  });
});
