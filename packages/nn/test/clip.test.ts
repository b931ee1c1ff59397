import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW, clipFactor, clipGradNorm, gradNorm, readClipFactor, SGD } from '../src/index';

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

describe('gradNorm and clipFactor', () => {
  it('give the global L2 norm and min(1, maxNorm / (norm + 1e-6))', async () => {
    const { grads, norm } = gradients();
    const got = await gradNorm(grads).item();
    expect(Math.abs(got - norm) / norm).toBeLessThan(1e-6);
    expect(clipFactor(norm, norm / 4)).toBeCloseTo(0.25, 6);
    expect(clipFactor(norm, norm * 2)).toBe(1);
    expect(() => gradNorm([])).toThrow(/gradNorm: expected at least one gradient/);
  });

  it('readClipFactor reads the norm back as the factor and releases it', async () => {
    const { grads, norm } = gradients();
    const backend = grads[0].backend;
    const live = backend.liveCount();
    expect(await readClipFactor(grads, norm / 4)).toBeCloseTo(0.25, 6);
    expect(await readClipFactor(grads, norm * 2)).toBe(1);
    expect(backend.liveCount()).toBe(live);
  });

  for (const make of [() => new AdamW({ weightDecay: 0.1 }), () => new SGD({ weightDecay: 0.1 })]) {
    it(`${make().constructor.name}: a step with gradScale s is the step on the gradients times s`, async () => {
      const { grads, values } = gradients();
      const start = values.map((v, s) => v.map((x, i) => 0.5 * Math.cos(x + i) + s));
      const [folded, scaled] = [0, 1].map(() => start.map((v, s) => tensor(v, grads[s].shape)));
      const s = 0.37;
      const [a, b] = [make(), make()];
      for (let step = 0; step < 3; step++) {
        a.step(folded, grads, 1e-2, s);
        b.step(
          scaled,
          grads.map((g) => g.mul(s)),
          1e-2,
        );
      }
      for (const [i, p] of folded.entries()) {
        const [want, got] = [await scaled[i].data(), await p.data()];
        for (const [j, x] of want.entries())
          expect(Math.abs(got[j] - x)).toBeLessThan(1e-6 * Math.max(1, Math.abs(x)));
        // The step moved the parameter (the check above is not of two untouched copies).
        expect(Math.abs(got[0] - Math.fround(start[i][0]))).toBeGreaterThan(1e-4);
      }
    });
  }
});
