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

    it('slices and writes slices', () => {
      const shape = [3, 10, 12];
      const x = filled(size(shape), 'f32');
      const [sliced, slicedJs] = bothWays(2 * 7 * 9, 'f32', (settings, out) =>
        sliceKernel(settings, x, shape, [1, 2, 3], [2, 7, 9], out),
      );
      expect(sliced).toEqual(slicedJs);
      const src = filled(2 * 7 * 9, 'f32');
      const [written, writtenJs] = bothWays(x.length, 'f32', (settings, out) => {
        out.values.set(x.values);
        writeSliceKernel(settings, out, shape, src, [2, 7, 9], [1, 2, 3]);
      });
      expect(written).toEqual(writtenJs);
      for (const s of [x, src]) s.free();
    });
  },
);
