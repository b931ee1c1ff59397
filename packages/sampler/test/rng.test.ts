import { describe, expect, it } from 'vitest';
import { MAX_SEED, Rng, SamplerConfigError } from '../src/index';

function draws(rng: Rng, n: number): number[] {
  return Array.from({ length: n }, () => rng.nextUint32());
}

describe('Rng (xoshiro128** seeded by SplitMix64)', () => {
  it('matches the reference C implementation', () => {
    // Outputs of the reference xoshiro128** and splitmix64 C code (Blackman and Vigna) for these seeds.
    expect(draws(new Rng(0), 6)).toEqual([
      3737715805, 2584255861, 2876756834, 3286328325, 1553311962, 1625202774,
    ]);
    expect(draws(new Rng(42), 6)).toEqual([
      1776835114, 4165204688, 17111135, 2317295270, 2792088233, 2554630222,
    ]);
    expect(draws(new Rng(MAX_SEED), 6)).toEqual([
      1233166643, 1287031142, 661813442, 2960669951, 2601079046, 1036114921,
    ]);
  });

  it('repeats a sequence for the same seed and changes it for another', () => {
    expect(draws(new Rng(7), 100)).toEqual(draws(new Rng(7), 100));
    expect(draws(new Rng(7), 100)).not.toEqual(draws(new Rng(8), 100));
  });

  it('makes floats in [0, 1) with a mean near 1/2', () => {
    const rng = new Rng(3);
    let sum = 0;
    for (let i = 0; i < 10_000; i++) {
      const u = rng.nextFloat();
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      sum += u;
    }
    expect(Math.abs(sum / 10_000 - 0.5)).toBeLessThan(0.01);
  });

  it('builds floats from two 32-bit outputs', () => {
    const words = draws(new Rng(5), 2);
    const expected = ((words[0] >>> 5) * 2 ** 26 + (words[1] >>> 6)) / 2 ** 53;
    expect(new Rng(5).nextFloat()).toBe(expected);
  });

  it('rejects seeds that are not safe non-negative integers', () => {
    expect(() => new Rng(-1)).toThrow(SamplerConfigError);
    expect(() => new Rng(1.5)).toThrow('seed must be an integer in [0, 9007199254740991], got 1.5');
    expect(() => new Rng(2 ** 53)).toThrow(/seed must be an integer/);
  });
});
