import { describe, expect, it } from 'vitest';
import { argmaxRowsInto } from '../src/argmax-rows';
import { argmaxKernel } from '../src/reduce';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

let seed = 77;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
  return (seed >>> 8) / 2 ** 24;
}

/** A row of `size` values drawn from a few levels, so maxima repeat, with ±0, -Infinity and NaN mixed in. */
function row(size: number, special: boolean): number[] {
  const levels = [-3, -1, -0, 0, 0.5, 2, Number.NEGATIVE_INFINITY, Number.NaN];
  return Array.from({ length: size }, () => {
    const level = levels[Math.floor(random() * (special ? levels.length : 6))];
    return special ? level : level + Math.floor(random() * 3);
  });
}

describe.skipIf(!wasmForTests())('argmax over rows (WebAssembly) against the JavaScript kernel', () => {
  it('gives the first maximum of each row, ties, signed zeros, -Infinity and NaN as the JavaScript kernel does', () => {
    for (const size of [1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 1000]) {
      for (const special of [false, true]) {
        const rows = 12;
        const values = Array.from({ length: rows - 4 }, () => row(size, special));
        // All -Infinity; NaN first; NaN everywhere but one value; the maximum only in the tail.
        values.push(new Array(size).fill(Number.NEGATIVE_INFINITY));
        values.push([Number.NaN, ...row(size - 1, special)]);
        values.push(Array.from({ length: size }, (_, i) => (i === size - 1 ? 1 : Number.NaN)));
        values.push(Array.from({ length: size }, (_, i) => (i === size - 1 ? 5 : i % 3)));
        const x = new CpuStorage('f32', rows * size, false);
        x.f32.set(values.flat());
        const out = new CpuStorage('i32', rows, false);
        const dims = { outer: rows, size, inner: 1 };
        expect(argmaxRowsInto(SETTINGS, x, dims, out)).toBe(true);
        const want = new Int32Array(rows);
        argmaxKernel(x.f32, dims, want);
        expect(Array.from(out.i32), `size ${size}, special ${special}`).toEqual(Array.from(want));
        x.free();
        out.free();
      }
    }
  });
});
