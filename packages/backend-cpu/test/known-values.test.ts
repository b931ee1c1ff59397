import {
  argmax,
  attention,
  gather,
  matmul,
  permute,
  rope,
  scatterAdd,
  setBackend,
  slice,
  softmaxCrossEntropy,
  sum,
  tensor,
} from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/index';

/** Hand-computed values: the reference backend is itself checked against arithmetic done by hand. */
describe('cpu backend known values', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  it('broadcasts, reduces and compares', async () => {
    const a = tensor([[1], [2], [3]]);
    const b = tensor([10, 20]);
    expect(await a.add(b).array()).toEqual([11, 21, 12, 22, 13, 23]);
    expect(await sum(a.mul(b), 0).array()).toEqual([60, 120]);
    expect(await a.lt(2).array()).toEqual([1, 0, 0]);
    expect(await tensor([3, 9, 9, 1]).argmax().item()).toBe(1);
    expect(
      await argmax(
        tensor([
          [1, 5],
          [7, 2],
        ]),
        0,
      ).array(),
    ).toEqual([1, 0]);
    expect(
      await tensor([7, -7], [2], { dtype: 'i32' })
        .div(tensor([2, 0], [2], { dtype: 'i32' }))
        .array(),
    ).toEqual([3, -7]);
  });

  it('multiplies matrices with transposes and batches', async () => {
    const a = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    const b = tensor([
      [1, 0],
      [0, 1],
      [1, 1],
    ]);
    expect(await matmul(a, b).array()).toEqual([4, 5, 10, 11]);
    expect(
      await matmul(
        a,
        tensor([
          [1, 0, 1],
          [0, 1, 1],
        ]),
        { transB: true },
      ).array(),
    ).toEqual([4, 5, 10, 11]);
    expect(
      await matmul(
        tensor([
          [1, 4],
          [2, 5],
          [3, 6],
        ]),
        b,
        { transA: true },
      ).array(),
    ).toEqual([4, 5, 10, 11]);
    const batched = matmul(tensor([1, 2, 3, 4], [2, 1, 2]), tensor([[1], [1]]));
    expect(batched.shape).toEqual([2, 1, 1]);
    expect(await batched.array()).toEqual([3, 7]);
  });

  it('moves data', async () => {
    const x = tensor([0, 1, 2, 3, 4, 5], [2, 3]);
    expect(await permute(x, [1, 0]).array()).toEqual([0, 3, 1, 4, 2, 5]);
    expect(await slice(x, [1, 1], [1, 2]).array()).toEqual([4, 5]);
    const ids = tensor([2, 0, 2], [3], { dtype: 'i32' });
    const table = tensor([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(await gather(table, ids).array()).toEqual([3, 3, 1, 1, 3, 3]);
    expect(
      await scatterAdd(
        tensor([
          [1, 2],
          [3, 4],
          [5, 6],
        ]),
        ids,
        3,
      ).array(),
    ).toEqual([3, 4, 0, 0, 6, 8]);
  });

  it('rotates, attends and scores like the formulas', async () => {
    const x = tensor([1, 0, 1, 0], [1, 1, 1, 4]);
    const rotated = await rope(x, { offset: 1, theta: 100 }).array();
    expect(rotated[0]).toBeCloseTo(Math.cos(1), 6);
    expect(rotated[1]).toBeCloseTo(Math.sin(1), 6);
    expect(rotated[2]).toBeCloseTo(Math.cos(0.1), 6);
    expect(rotated[3]).toBeCloseTo(Math.sin(0.1), 6);
    const q = tensor([1, 0], [1, 1, 1, 2]);
    const k = tensor([1, 0, 0, 0], [1, 2, 1, 2]);
    const v = tensor([10, 0, 0, 10], [1, 2, 1, 2]);
    const w = Math.exp(1 / Math.sqrt(2));
    const out = await attention(q, k, v).array();
    expect(out[0]).toBeCloseTo((10 * w) / (w + 1), 5);
    expect(out[1]).toBeCloseTo(10 / (w + 1), 5);
    const loss = await softmaxCrossEntropy(
      tensor([
        [0, 0],
        [0, Math.log(3)],
      ]),
      tensor([0, 1], [2], { dtype: 'i32' }),
    ).item();
    expect(loss).toBeCloseTo((Math.log(2) + Math.log(4 / 3)) / 2, 6);
  });
});
