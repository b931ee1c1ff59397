import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { clipGradNorm } from '../src/index';

beforeAll(() => setBackend(new CpuBackend({ threads: 2 })));

/** Gradients of several shapes (a vector, a matrix, one large enough for the SIMD kernels), their values and their norm. */
function gradients(): { grads: Tensor[]; values: number[][]; norm: number } {
  const shapes = [[5], [3, 4], [2, 3, 300], [1, 1]];
  const values = shapes.map((shape, s) =>
    Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(1 + i * 0.37 + s) * (s + 1)),
  );
  const grads = values.map((v, s) => tensor(v, shapes[s]));
  let squares = 0;
  for (const v of values) for (const x of v) squares += Math.fround(x) ** 2;
  return { grads, values, norm: Math.sqrt(squares) };
}

describe('clipGradNorm', () => {
  it('returns the global L2 norm and scales every gradient by maxNorm / norm when the norm is larger', async () => {
    const { grads, values, norm } = gradients();
    const maxNorm = norm / 3;
    const clipped = clipGradNorm(grads, maxNorm);
    expect((await clipped.norm.data())[0]).toBeCloseTo(norm, 3);
    expect(Math.abs((await clipped.norm.data())[0] - norm) / norm).toBeLessThan(1e-6);
    const scale = maxNorm / (norm + 1e-6);
    for (const [s, g] of clipped.grads.entries()) {
      expect(g.shape).toEqual(grads[s].shape);
      const got = await g.data();
      for (const [i, x] of values[s].entries()) {
        expect(Math.abs(got[i] - x * scale)).toBeLessThan(1e-6 * Math.max(1, Math.abs(x)));
      }
    }
  });

  it('leaves the gradients as they are when their norm is within maxNorm', async () => {
    const { grads, values, norm } = gradients();
    const clipped = clipGradNorm(grads, norm * 2);
    for (const [s, g] of clipped.grads.entries())
      expect(Array.from(await g.data())).toEqual(Array.from(Float32Array.from(values[s])));
  });

  it('refuses an empty list of gradients', () => {
    expect(() => clipGradNorm([], 1)).toThrow(/clipGradNorm: expected at least one gradient/);
  });
});
