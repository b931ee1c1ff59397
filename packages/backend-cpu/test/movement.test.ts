import type { DType, Shape } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { permuteKernel, sliceKernel, writeSliceKernel } from '../src/movement';
import { CpuStorage } from '../src/storage';
import type { CpuKernelSettings } from '../src/wasm/settings';
import { JS_SETTINGS, SETTINGS, wasmForTests } from './wasm-for-tests';

/** Runs `fn` twice, with the WebAssembly kernels and with the JavaScript ones; gives both outputs. */
function bothWays(
  length: number,
  dtype: DType,
  fn: (settings: CpuKernelSettings, out: CpuStorage) => void,
): [number[], number[]] {
  const results: number[][] = [];
  for (const settings of [SETTINGS, JS_SETTINGS]) {
    const out = new CpuStorage(dtype, length);
    try {
      fn(settings, out);
      results.push(Array.from(out.values));
    } finally {
      out.free();
    }
  }
  return [results[0], results[1]];
}

function filled(length: number, dtype: DType): CpuStorage {
  const s = new CpuStorage(dtype, length);
  // i32 values include bit patterns that are NaNs as f32: the copy must move bits, not values.
  for (let i = 0; i < length; i++) s.values[i] = dtype === 'i32' ? (0x7fa00000 + i) | 0 : i * 0.5 - 3;
  return s;
}

const size = (shape: Shape) => shape.reduce((a, b) => a * b, 1);

/** out[i] = x[the permuted index of i], index by index: the reference the kernels are held to. */
function permuteReference(x: ArrayLike<number>, shape: Shape, perm: readonly number[]): number[] {
  const outShape = perm.map((p) => shape[p]);
  const strides = shape.map((_, axis) => size(shape.slice(axis + 1)));
  const out: number[] = [];
  const index = outShape.map(() => 0);
  for (let i = 0; i < size(outShape); i++) {
    out.push(x[index.reduce((offset, at, axis) => offset + at * strides[perm[axis]], 0)]);
    for (let axis = outShape.length - 1; axis >= 0; axis--) {
      if (++index[axis] < outShape[axis]) break;
      index[axis] = 0;
    }
  }
  return out;
}

describe.skipIf(!wasmForTests())(
  'movement kernels: the WebAssembly block copy equals the JavaScript copy',
  () => {
    const permutes: [Shape, number[]][] = [
      [
        [12, 64, 4, 32],
        [0, 2, 1, 3],
      ],
      [
        [2, 5, 3, 7],
        [2, 0, 1, 3],
      ],
      [
        [3, 9, 6],
        [1, 0, 2],
      ],
      [
        [4, 33],
        [0, 1],
      ],
      [
        [2, 3, 4, 5, 6],
        [0, 2, 3, 1, 4],
      ],
      [
        [8, 16],
        [1, 0],
      ],
    ];
    for (const dtype of ['f32', 'i32'] as const) {
      for (const [shape, perm] of permutes) {
        it(`permute ${dtype} [${shape}] by [${perm}]`, () => {
          const x = filled(size(shape), dtype);
          const [wasm, js] = bothWays(x.length, dtype, (settings, out) =>
            permuteKernel(settings, x, shape, perm, out),
          );
          expect(wasm).toEqual(js);
          x.free();
        });
      }
    }

    it('permutes with axes of size 1 and axes the copy merges as the index-by-index reference does', () => {
      const cases: [Shape, number[]][] = [
        [
          [12, 4, 1, 64, 32],
          [0, 3, 1, 2, 4],
        ],
        [
          [12, 64, 4, 1, 32],
          [0, 2, 3, 1, 4],
        ],
        [
          [1, 3, 1, 5, 1],
          [4, 3, 2, 1, 0],
        ],
        [
          [2, 3, 4, 5],
          [0, 1, 3, 2],
        ],
        [
          [6, 1, 7, 9],
          [0, 1, 2, 3],
        ],
        [
          [3, 1, 2, 1, 4, 17],
          [2, 0, 4, 1, 3, 5],
        ],
        [[1], [0]],
      ];
      for (const dtype of ['f32', 'i32'] as const) {
        for (const [shape, perm] of cases) {
          const x = filled(size(shape), dtype);
          const expected = permuteReference(x.values, shape, perm);
          const [wasm, js] = bothWays(x.length, dtype, (settings, out) =>
            permuteKernel(settings, x, shape, perm, out),
          );
          expect(wasm, `${dtype} [${shape}] by [${perm}]`).toEqual(expected);
          expect(js, `${dtype} [${shape}] by [${perm}]`).toEqual(expected);
          x.free();
        }
      }
    });

    it('slices and writes slices as the index-by-index reference does', () => {
      const shape = [3, 10, 12];
      const [starts, sizes] = [
        [1, 2, 3],
        [2, 7, 9],
      ];
      const at = (i: number, j: number, k: number) => (i * shape[1] + j) * shape[2] + k;
      const x = filled(size(shape), 'f32');
      const expectedSlice: number[] = [];
      for (let i = 0; i < sizes[0]; i++)
        for (let j = 0; j < sizes[1]; j++)
          for (let k = 0; k < sizes[2]; k++) expectedSlice.push(x.values[at(i + 1, j + 2, k + 3)]);
      const [sliced, slicedJs] = bothWays(size(sizes), 'f32', (settings, out) =>
        sliceKernel(settings, x, shape, starts, sizes, out),
      );
      expect(sliced).toEqual(expectedSlice);
      expect(slicedJs).toEqual(expectedSlice);
      const src = filled(size(sizes), 'f32');
      const expectedWrite = Array.from(x.values);
      let n = 0;
      for (let i = 0; i < sizes[0]; i++)
        for (let j = 0; j < sizes[1]; j++)
          for (let k = 0; k < sizes[2]; k++) expectedWrite[at(i + 1, j + 2, k + 3)] = src.values[n++];
      const [written, writtenJs] = bothWays(x.length, 'f32', (settings, out) => {
        out.values.set(x.values);
        writeSliceKernel(settings, out, shape, src, sizes, starts);
      });
      expect(written).toEqual(expectedWrite);
      expect(writtenJs).toEqual(expectedWrite);
      for (const s of [x, src]) s.free();
    });
  },
);
