import type { ReduceDims } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { sumColumnsInto } from '../src/column-sum';
import { reduceKernel } from '../src/reduce';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

let seed = 11;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

describe.skipIf(!wasmForTests())('column sums in WebAssembly equal the float64 JavaScript reduction', () => {
  const cases: ReduceDims[] = [
    { outer: 1, size: 1, inner: 4 },
    { outer: 1, size: 768, inner: 512 },
    { outer: 3, size: 5, inner: 7 },
    { outer: 2, size: 33, inner: 130 },
    { outer: 100, size: 3, inner: 8 },
    { outer: 1, size: 1000, inner: 5 },
  ];
  for (const dims of cases) {
    it(`[${dims.outer}, ${dims.size}, ${dims.inner}]`, () => {
      const n = dims.outer * dims.size * dims.inner;
      const x = new CpuStorage('f32', n);
      x.values.set(Array.from({ length: n }, () => (random() - 0.5) * 10 ** Math.floor(random() * 6)));
      const out = new CpuStorage('f32', dims.outer * dims.inner);
      const want = new Float32Array(dims.outer * dims.inner);
      expect(sumColumnsInto(SETTINGS, x, dims, out)).toBe(true);
      reduceKernel('sum', x.values, dims, want);
      // Same order, float64 accumulators, one rounding: bit for bit the same.
      expect(Array.from(out.values)).toEqual(Array.from(want));
      x.free();
      out.free();
    });
  }

  it('declines rows narrower than a vector', () => {
    const x = new CpuStorage('f32', 6);
    const out = new CpuStorage('f32', 3);
    expect(sumColumnsInto(SETTINGS, x, { outer: 1, size: 2, inner: 3 }, out)).toBe(false);
    x.free();
    out.free();
  });
});
