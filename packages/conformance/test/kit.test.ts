import { type AnyFusedOp, fusedOps } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { allGroups, EXACT, firstMismatch, hostValues, REDUCTION } from '../src/index';

describe('conformance kit', () => {
  it('reports the worst mismatch and accepts values within tolerance', () => {
    expect(firstMismatch([1, 2, 3], [1, 2, 3], EXACT)).toBeUndefined();
    expect(firstMismatch([1, 2.00001], [1, 2], REDUCTION)).toBeUndefined();
    expect(firstMismatch([1, 2.5, 3.1], [1, 2, 3], REDUCTION)).toMatch(
      /2 of 3 elements differ; worst at index 1/,
    );
    expect(firstMismatch([Number.NaN], [0], REDUCTION)).toMatch(/1 of 1/);
    expect(firstMismatch([1], [1, 2], EXACT)).toMatch(/length 1 differs/);
  });

  it('generates the same seeded inputs every time, in the requested range', () => {
    const a = hostValues({ shape: [100], dist: { kind: 'ints', low: -1, high: 3 } }, 5);
    expect(a).toEqual(hostValues({ shape: [100], dist: { kind: 'ints', low: -1, high: 3 } }, 5));
    expect(a).toBeInstanceOf(Int32Array);
    expect(Math.min(...a)).toBe(-1);
    expect(Math.max(...a)).toBe(3);
  });

  it('covers every op of the foundation issue', () => {
    const ops = new Set(allGroups.map((g) => g.op));
    const required = [
      'neg exp log sqrt rsqrt recip abs tanh sigmoid silu gelu relu sin cos',
      'add sub mul div pow max min eq ne lt le gt ge where sum mean argmax',
      'matmul reshape permute slice concat gather scatterAdd cast fill arange rand randn writeSlice',
      'rmsnorm layernorm rope attention swiglu softmax logSoftmax softmaxCrossEntropy',
    ]
      .join(' ')
      .split(' ');
    expect(required.filter((op) => !ops.has(op))).toEqual([]);
  });

  it('checks every op of the fused-op table, each case with one input per tensor input', () => {
    const groups = new Map(allGroups.map((g) => [g.op, g]));
    for (const op of Object.values(fusedOps) as AnyFusedOp[]) {
      const group = groups.get(op.name);
      expect(group?.cases.length, `${op.name}: cases in the kit`).toBe(op.cases.length);
      expect(
        group?.cases.filter((c) => c.composite === undefined).length,
        `${op.name}: composite paths`,
      ).toBe(0);
      for (const c of op.cases) expect(c.inputs.length, `${op.name} ${c.label}`).toBe(op.inputs.length);
    }
  });
});
