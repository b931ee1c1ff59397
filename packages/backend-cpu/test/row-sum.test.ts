import type { ReduceDims } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { sumRowsInto } from '../src/row-sum';
import { CpuStorage } from '../src/storage';
import { cpuThreadsReady } from '../src/threads/shared-pool';
import { cpuKernelSettings } from '../src/wasm/settings';
import { wasmForTests } from './wasm-for-tests';

let seed = 5;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

/** The gap between f32 values around |v|. */
function f32Ulp(v: number): number {
  const a = Math.max(Math.abs(v), 2 ** -126);
  return 2 ** (Math.floor(Math.log2(a)) - 23);
}

describe.skipIf(!wasmForTests())('row sums in WebAssembly', () => {
  const cases: ReduceDims[] = [
    { outer: 1, size: 1, inner: 1 },
    { outer: 1, size: 3, inner: 1 },
    { outer: 4, size: 4, inner: 1 },
    { outer: 3, size: 5, inner: 1 },
    { outer: 768, size: 64, inner: 1 },
    { outer: 7, size: 1001, inner: 1 },
    { outer: 1, size: 98_304, inner: 1 },
  ];
  for (const threads of [1, 2]) {
    for (const dims of cases) {
      it(`[${dims.outer}, ${dims.size}] on ${threads} thread(s) are the float64 sums, rounded once`, async () => {
        const settings = cpuKernelSettings({ wasm: true, threads });
        await cpuThreadsReady(settings);
        const n = dims.outer * dims.size;
        const x = new CpuStorage('f32', n);
        // Magnitudes over six decades and both signs: a float32 accumulator would drift visibly.
        x.values.set(Array.from({ length: n }, () => (random() - 0.5) * 10 ** Math.floor(random() * 6)));
        const out = new CpuStorage('f32', dims.outer);
        expect(sumRowsInto(settings, x, dims, out)).toBe(true);
        for (let r = 0; r < dims.outer; r++) {
          let exact = 0;
          for (let s = 0; s < dims.size; s++) exact += x.values[r * dims.size + s];
          expect(
            Math.abs(out.values[r] - exact),
            `row ${r}: ${out.values[r]} vs ${exact}`,
          ).toBeLessThanOrEqual(f32Ulp(exact));
        }
        x.free();
        out.free();
      });
    }
  }

  it('declines operands off the WebAssembly heap', () => {
    const settings = cpuKernelSettings({ wasm: false, threads: 1 });
    const x = new CpuStorage('f32', 8);
    const out = new CpuStorage('f32', 2);
    expect(sumRowsInto(settings, x, { outer: 2, size: 4, inner: 1 }, out)).toBe(false);
    x.free();
    out.free();
  });
});
