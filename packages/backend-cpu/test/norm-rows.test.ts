import { describe, expect, it } from 'vitest';
import { layernormGradKernel, layernormKernel, rmsnormGradKernel, rmsnormKernel } from '../src/fused/norm';
import { normRowsInto } from '../src/norm-rows';
import { CpuStorage } from '../src/storage';
import { NORM_KERNELS } from '../src/wasm/norm-kernel';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

let seed = 5;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function storage(values: Float64Array): CpuStorage {
  const s = new CpuStorage('f32', values.length);
  s.values.set(values);
  return s;
}

/** f32-representable values with an offset per row (so the mean matters) and mixed scales. */
function values(n: number, offset: number, scale: number): Float64Array {
  return Float64Array.from({ length: n }, () => Math.fround(offset + (random() - 0.5) * scale));
}

const EPS = 1e-5;

describe.skipIf(!wasmForTests())('norm kernels in WebAssembly match the float64 JavaScript kernels', () => {
  for (const [rows, d] of [
    [1, 4],
    [3, 8],
    [768, 128],
    [5, 132],
    [2, 4096],
  ]) {
    it(`${rows} rows of ${d}`, () => {
      const x = values(rows * d, 3, 4);
      const g = values(rows * d, 0, 2);
      const w = values(d, 1, 1);
      const b = values(d, 0, 1);
      const [xs, gs, ws, bs] = [x, g, w, b].map(storage);
      const cases = [
        {
          name: 'layernorm',
          run: (o: CpuStorage) => normRowsInto(SETTINGS, NORM_KERNELS.layernorm, [xs], [ws, bs], o, EPS),
          want: (o: Float64Array) => layernormKernel(x, w, b, EPS, o),
        },
        {
          name: 'rmsnorm',
          run: (o: CpuStorage) => normRowsInto(SETTINGS, NORM_KERNELS.rmsnorm, [xs], [ws], o, EPS),
          want: (o: Float64Array) => rmsnormKernel(x, w, EPS, o),
        },
        {
          name: 'layernorm gradient',
          run: (o: CpuStorage) => normRowsInto(SETTINGS, NORM_KERNELS.layernormGrad, [xs, gs], [ws], o, EPS),
          want: (o: Float64Array) => layernormGradKernel(x, w, g, EPS, o),
        },
        {
          name: 'rmsnorm gradient',
          run: (o: CpuStorage) => normRowsInto(SETTINGS, NORM_KERNELS.rmsnormGrad, [xs, gs], [ws], o, EPS),
          want: (o: Float64Array) => rmsnormGradKernel(x, w, g, EPS, o),
        },
      ];
      for (const c of cases) {
        const out = new CpuStorage('f32', rows * d);
        expect(c.run(out), c.name).toBe(true);
        const want = new Float64Array(rows * d);
        c.want(want);
        let worst = 0;
        for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(out.values[i] - want[i]));
        // Outputs are O(1..10); f32 element-wise steps after float64 row statistics.
        expect(worst, `${c.name}: largest absolute error`).toBeLessThan(2e-5);
        out.free();
      }
      for (const s of [xs, gs, ws, bs]) s.free();
    });
  }

  it('declines rows whose length is not a multiple of 4', () => {
    const x = storage(values(12, 0, 1));
    const w = storage(values(6, 1, 1));
    const out = new CpuStorage('f32', 12);
    expect(normRowsInto(SETTINGS, NORM_KERNELS.rmsnorm, [x], [w], out, EPS)).toBe(false);
    for (const s of [x, w, out]) s.free();
  });
});
