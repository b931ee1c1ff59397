import { Rng } from '@loom/sampler';
import { describe, expect, it } from 'vitest';
import { attentionStats } from '../src/attention-stats';
import { singularValues } from '../src/singular-values';

/** Uniform numbers in [0, 1) from a seeded generator. */
function uniform(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.nextFloat();
}

/** |det| of a square matrix by Gaussian elimination with partial pivoting. */
function absDet(a: readonly number[], n: number): number {
  const m = [...a];
  let det = 1;
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r * n + c]) > Math.abs(m[pivot * n + c])) pivot = r;
    for (let k = 0; k < n; k++) [m[c * n + k], m[pivot * n + k]] = [m[pivot * n + k], m[c * n + k]];
    det *= m[c * n + c];
    for (let r = c + 1; r < n; r++) {
      const f = m[r * n + c] / m[c * n + c];
      for (let k = c; k < n; k++) m[r * n + k] -= f * m[c * n + k];
    }
  }
  return Math.abs(det);
}

describe('singularValues', () => {
  it('gives the absolute diagonal of a diagonal matrix, largest first', () => {
    expect([...singularValues([3, 0, 0, 0, -5, 0, 0, 0, 1], 3, 3)]).toEqual([5, 3, 1]);
  });

  it('keeps the Frobenius norm and the determinant of a random square matrix', () => {
    const next = uniform(7);
    const n = 9;
    const a = Array.from({ length: n * n }, () => next() * 2 - 1);
    const s = singularValues(a, n, n);
    const frobenius = a.reduce((sum, x) => sum + x * x, 0);
    expect(s.reduce((sum, x) => sum + x * x, 0)).toBeCloseTo(frobenius, 10);
    expect(s.reduce((p, x) => p * x, 1)).toBeCloseTo(absDet(a, n), 10);
    for (let i = 1; i < n; i++) expect(s[i]).toBeLessThanOrEqual(s[i - 1]);
  });

  it('finds the rank of a product of thin factors, tall or wide alike', () => {
    const next = uniform(3);
    const [rows, cols, inner] = [7, 5, 2];
    const u = Array.from({ length: rows * inner }, () => next() - 0.5);
    const v = Array.from({ length: inner * cols }, () => next() - 0.5);
    const a = Array.from({ length: rows * cols }, (_, i) => {
      const [r, c] = [Math.floor(i / cols), i % cols];
      return u[r * inner] * v[c] + u[r * inner + 1] * v[cols + c];
    });
    const transposed = Array.from(
      { length: rows * cols },
      (_, i) => a[(i % rows) * cols + Math.floor(i / rows)],
    );
    const tall = singularValues(a, rows, cols);
    const wide = singularValues(transposed, cols, rows);
    expect(tall.length).toBe(cols);
    expect(tall.filter((x) => x > 1e-9 * tall[0]).length).toBe(inner);
    for (let i = 0; i < cols; i++) expect(wide[i]).toBeCloseTo(tall[i], 12);
  });

  it('refuses a length that does not match the shape', () => {
    expect(() => singularValues([1, 2, 3], 2, 2)).toThrow(/expected 2 x 2 = 4 values, got 3/);
  });
});

describe('attentionStats', () => {
  it('finds a causal (lower-triangular, positive diagonal) matrix full rank', () => {
    const t = 8;
    const probs = Array.from({ length: t * t }, (_, i) => {
      const [row, col] = [Math.floor(i / t), i % t];
      return col <= row ? 1 / (row + 1) : 0;
    });
    const stats = attentionStats(probs, t);
    expect(stats.rank).toBe(t);
    const harmonic = Array.from({ length: t }, (_, r) => Math.log(r + 1)).reduce((a, b) => a + b, 0) / t;
    expect(stats.rowEntropy).toBeCloseTo(harmonic, 12);
  });

  it('finds uniform attention rank 1 with the largest entropy', () => {
    const t = 6;
    const stats = attentionStats(new Array(t * t).fill(1 / t), t);
    expect(stats.rank).toBe(1);
    expect(stats.effectiveRank).toBeCloseTo(1, 6);
    expect(stats.rowEntropy).toBeCloseTo(Math.log(t), 12);
  });

  it('finds the identity full rank with an effective rank of T and zero entropy', () => {
    const t = 5;
    const stats = attentionStats(
      Array.from({ length: t * t }, (_, i) => (i % (t + 1) === 0 ? 1 : 0)),
      t,
    );
    expect(stats.rank).toBe(t);
    expect(stats.effectiveRank).toBeCloseTo(t, 10);
    expect(stats.rowEntropy).toBe(0);
    expect([...stats.spectrum]).toEqual(new Array(t).fill(1));
  });
});
