import { describe, expect, it } from 'vitest';
import { mix32, normalAt, uniformAt } from '../src/random';

describe('counter-based random generator', () => {
  it('is deterministic, seed-dependent and in range', () => {
    expect(uniformAt(1, 5)).toBe(uniformAt(1, 5));
    expect(uniformAt(1, 5)).not.toBe(uniformAt(2, 5));
    expect(mix32(0)).toBe(0);
    expect(mix32(1)).not.toBe(mix32(2));
    for (let i = 0; i < 1000; i++) {
      const u = uniformAt(9, i);
      expect(u > 0 && u < 1).toBe(true);
    }
  });

  it('draws normal values with mean near 0 and variance near 1', () => {
    const n = 20_000;
    let sum = 0;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      const x = normalAt(3, i);
      sum += x;
      sq += x * x;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.03);
    expect(Math.abs(sq / n - 1)).toBeLessThan(0.05);
  });
});
