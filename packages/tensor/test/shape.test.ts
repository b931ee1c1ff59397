import { describe, expect, it } from 'vitest';
import { broadcastShapes, broadcastStrides, normalizeAxes, sizeOf, stridesOf } from '../src/shape';

describe('shapes', () => {
  it('broadcasts like NumPy and names the op and shapes when it cannot', () => {
    expect(broadcastShapes('add', [3, 1], [1, 4])).toEqual([3, 4]);
    expect(broadcastShapes('add', [2, 3, 4], [4])).toEqual([2, 3, 4]);
    expect(broadcastShapes('where', [], [5], [2, 1])).toEqual([2, 5]);
    expect(() => broadcastShapes('mul', [2, 3], [4, 3])).toThrow(
      'mul: shapes [2, 3] and [4, 3] cannot be broadcast',
    );
  });

  it('computes strides, broadcast strides and sizes', () => {
    expect(stridesOf([2, 3, 4])).toEqual([12, 4, 1]);
    expect(broadcastStrides([3, 1], [2, 3, 4])).toEqual([0, 1, 0]);
    expect(sizeOf([])).toBe(1);
    expect(sizeOf([4, 0, 2])).toBe(0);
  });

  it('normalises negative and repeated axes and rejects out-of-range ones', () => {
    expect(normalizeAxes('sum', [-1, 0, 2], 3)).toEqual([0, 2]);
    expect(() => normalizeAxes('sum', [3], 3)).toThrow('sum: axis 3 is out of range for a tensor of rank 3');
  });
});
