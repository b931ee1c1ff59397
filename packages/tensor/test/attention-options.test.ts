import { describe, expect, it } from 'vitest';
import { attentionSpecOfShapes } from '../src/ops/attention-options';

describe('attentionSpecOfShapes', () => {
  const q = [1, 2, 4, 8];
  const kv = [1, 6, 2, 8];

  it('fills the defaults: causal, the queries the newest keys, no window, 1/sqrt(hd)', () => {
    expect(attentionSpecOfShapes('attention', q, kv, kv, {})).toEqual({
      mask: { kind: 'causal' },
      offset: 4,
      window: 0,
      keyLengths: [],
      scale: 1 / Math.sqrt(8),
    });
  });

  it('refuses bad shapes and options, naming the op, the value and every shape', () => {
    const shapes = 'q [1, 2, 4, 8], k [1, 6, 2, 8], v [1, 6, 2, 8]';
    const refusal =
      (options: object, qShape = q, kShape = kv) =>
      () =>
        attentionSpecOfShapes('attentionStep', qShape, kShape, kShape, options);
    expect(refusal({ offset: 5 })).toThrow(
      `attentionStep: offset 5 with 2 queries needs 7 keys, got 6; ${shapes}`,
    );
    expect(refusal({ window: -1 })).toThrow(`attentionStep: window must be an integer in [0, `);
    expect(refusal({ window: -1 })).toThrow(`got -1; ${shapes}; pass 0 or leave it out for no window`);
    expect(refusal({ keyLengths: [1, 2] })).toThrow(`needs one length per batch row (1), got 2; ${shapes}`);
    expect(refusal({}, [1, 2, 3, 8])).toThrow('Hkv must divide H; got q [1, 2, 3, 8], k [1, 6, 2, 8]');
    expect(refusal({}, q, [1, 6, 8])).toThrow('of equal shape; got q [1, 2, 4, 8], k [1, 6, 8], v [1, 6, 8]');
  });
});
