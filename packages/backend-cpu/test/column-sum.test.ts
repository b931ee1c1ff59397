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

describe.skipIf(!wasmForTests())(
  'column sums in WebAssembly agree with the float64 JavaScript reduction',
  () => {
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
        // Blocks of 8 rows summed pairwise in f32 (three roundings, each within 2^-24 of the block's Σ|x|), the
        // blocks in float64, one rounding at the end: within 3e-7 Σ|x| of the float64 sum.
        for (let o = 0; o < dims.outer; o++) {
          for (let j = 0; j < dims.inner; j++) {
            let magnitude = 0;
            for (let r = 0; r < dims.size; r++)
              magnitude += Math.abs(x.values[(o * dims.size + r) * dims.inner + j]);
            const at = o * dims.inner + j;
            expect(Math.abs(out.values[at] - want[at]), `column ${at}`).toBeLessThanOrEqual(3e-7 * magnitude);
          }
        }
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
  },
);
