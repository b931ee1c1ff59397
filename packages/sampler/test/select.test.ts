import { describe, expect, it } from 'vitest';
import { kthLargest, largestIds, Rng } from '../src/index';

function randomRow(seed: number, n: number, distinctValues: number): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from(
    { length: n },
    () => Math.floor(rng.nextFloat() * distinctValues) - distinctValues / 2,
  );
}

describe('kthLargest', () => {
  it('agrees with a full sort on random rows, with and without many ties', () => {
    for (const [n, distinct] of [
      [1, 4],
      [7, 3],
      [100, 1000],
      [1000, 5],
      [5000, 100_000],
    ]) {
      const row = randomRow(n, n, distinct);
      const sorted = Array.from(row).sort((a, b) => b - a);
      for (const k of new Set([1, Math.min(2, n), Math.ceil(n / 2), n])) {
        expect(kthLargest(row, k)).toBe(sorted[k - 1]);
      }
    }
  });

  it('handles -Infinity entries and leaves its input alone', () => {
    const row = new Float32Array([-Infinity, 2, -Infinity, 5, -Infinity]);
    expect(kthLargest(row, 1)).toBe(5);
    expect(kthLargest(row, 3)).toBe(-Infinity);
    expect(Array.from(row)).toEqual([-Infinity, 2, -Infinity, 5, -Infinity]);
  });

  it('rejects k outside [1, n]', () => {
    expect(() => kthLargest(new Float32Array(3), 0)).toThrow('k must be an integer in [1, 3], got 0');
    expect(() => kthLargest(new Float32Array(3), 4)).toThrow(/got 4/);
  });
});

describe('largestIds', () => {
  it('returns the n largest in id order, lowest ids among ties', () => {
    const row = new Float32Array([1, 3, 3, 0, 3, 2]);
    expect(largestIds(row, 1)).toEqual([1]);
    expect(largestIds(row, 2)).toEqual([1, 2]);
    expect(largestIds(row, 4)).toEqual([1, 2, 4, 5]);
    expect(largestIds(row, 10)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
