import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { SGD } from '../src/index';

beforeAll(() => setBackend(new CpuBackend()));

describe('SGD', () => {
  it('follows b ← μb + g + wd·p, p ← p − lr·b for three steps, computed by hand', async () => {
    const p = tensor([1, -2], [2]);
    const opt = new SGD({ momentum: 0.5, weightDecay: 0.1 });
    const grads = [
      [0.5, 1],
      [-1, 0.25],
      [2, -3],
    ];
    // By hand, lr 0.1: each step g' = g + 0.1·p, b = 0.5·b + g', p = p − 0.1·b.
    let [p0, p1] = [1, -2];
    let [b0, b1] = [0, 0];
    for (const [g0, g1] of grads) {
      const grad = tensor([g0, g1], [2]);
      opt.step([p], [grad], 0.1);
      grad.dispose();
      b0 = 0.5 * b0 + g0 + 0.1 * p0;
      b1 = 0.5 * b1 + g1 + 0.1 * p1;
      p0 -= 0.1 * b0;
      p1 -= 0.1 * b1;
      const [q0, q1] = await p.data();
      expect(q0).toBeCloseTo(p0, 6);
      expect(q1).toBeCloseTo(p1, 6);
    }
    expect(opt.stepCount).toBe(3);
    const [m0, m1] = await (opt.state().get('momentum.0') ?? p).data();
    expect(m0).toBeCloseTo(b0, 6);
    expect(m1).toBeCloseTo(b1, 6);
    opt.dispose();
    p.dispose();
  });

  it('refuses a gradient list that does not match the parameters', () => {
    const p = tensor([1], [1]);
    expect(() => new SGD().step([p], [], 0.1)).toThrow('SGD.step: got 1 parameters but 0 gradients');
    p.dispose();
  });
});
