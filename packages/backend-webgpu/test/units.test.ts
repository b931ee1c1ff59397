import { describe, expect, it } from 'vitest';
import { sizeClass } from '../src/buffer-pool';
import { collapse } from '../src/kernels/strided';
import { ParamLayout } from '../src/param-layout';
import { gridFor } from '../src/workgroup-grid';

describe('sizeClass', () => {
  it('rounds up to at most a quarter more than asked, never below 256 bytes', () => {
    expect(sizeClass(0)).toBe(256);
    expect(sizeClass(4)).toBe(256);
    expect(sizeClass(257)).toBe(320);
    for (const bytes of [300, 1000, 4096, 4100, 123_457 * 4, 36_864_000]) {
      const size = sizeClass(bytes);
      expect(size).toBeGreaterThanOrEqual(bytes);
      expect(size).toBeLessThanOrEqual(bytes * 1.25 + 32);
      expect(size % 4).toBe(0);
    }
  });
});

describe('gridFor', () => {
  it('keeps small dispatches one-dimensional', () => {
    expect(gridFor(10, 65_535)).toEqual([10, 1, 1]);
  });

  it('splits large dispatches over x and y within the limit', () => {
    const [x, y] = gridFor(200_000, 65_535);
    expect(x).toBeLessThanOrEqual(65_535);
    expect(x * y).toBeGreaterThanOrEqual(200_000);
  });

  it('refuses more workgroups than two dimensions hold', () => {
    expect(() => gridFor(17, 4)).toThrow(/exceed this device's limit/);
  });
});

describe('collapse', () => {
  it('merges axes every operand walks contiguously', () => {
    // [2, 3, 4] + [4]: the output walks all axes, b only the last.
    expect(
      collapse(
        [2, 3, 4],
        [
          [12, 4, 1],
          [0, 0, 1],
        ],
      ),
    ).toEqual({
      shape: [6, 4],
      strides: [
        [4, 1],
        [0, 1],
      ],
    });
  });

  it('drops size-1 axes and keeps rank >= 1', () => {
    expect(collapse([1, 1], [[1, 1]])).toEqual({ shape: [1], strides: [[0]] });
    expect(collapse([3, 1, 5], [[5, 5, 1]])).toEqual({ shape: [15], strides: [[1]] });
  });
});

describe('ParamLayout', () => {
  const layout = new ParamLayout().scalar('count', 'u32').scalar('eps', 'f32').array('shape', 'u32', 5);

  it('declares a WGSL struct whose arrays are 16-byte aligned vec4s', () => {
    expect(layout.wgsl()).toBe(
      'struct Params {\n  count: u32,\n  eps: f32,\n  shape: array<vec4<u32>, 2>,\n}',
    );
    expect(layout.byteSize).toBe(48);
  });

  it('packs values at the struct offsets', () => {
    const view = new DataView(layout.pack({ count: 7, eps: 0.5, shape: [1, 2, 3, 4, 5] }));
    expect(view.getUint32(0, true)).toBe(7);
    expect(view.getFloat32(4, true)).toBe(0.5);
    expect(view.getUint32(16, true)).toBe(1);
    expect(view.getUint32(32, true)).toBe(5);
  });

  it('refuses values the type cannot hold', () => {
    expect(() => layout.pack({ count: -1, eps: 0, shape: [] })).toThrow(/count: -1 is not a u32/);
    expect(() => layout.pack({ count: 1, eps: 0, shape: [1, 2, 3, 4, 5, 6] })).toThrow(/at most 5/);
  });
});
