import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { softmaxKernel } from '../src/fused/softmax';
import { wasmForTests } from './wasm-for-tests';

let seed = 7;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

/** Softmax of rows on the backend (the WebAssembly kernel where the heap is available). */
async function backendSoftmax(
  values: Float32Array,
  rows: number,
  cols: number,
  wasm = true,
): Promise<Float32Array> {
  const backend = new CpuBackend({ wasm });
  const id = backend.upload(values);
  const out = backend.fused.softmax?.({ id, shape: [rows, cols], dtype: 'f32' });
  if (!out) throw new Error('the CPU backend has a fused softmax');
  const result = Float32Array.from(await backend.read({ id: out, shape: [rows, cols], dtype: 'f32' }));
  backend.release(id);
  backend.release(out);
  return result;
}

describe.skipIf(!wasmForTests())('softmax in WebAssembly SIMD matches the float64 JavaScript kernel', () => {
  for (const [rows, cols] of [
    [1, 1],
    [3, 3],
    [5, 4],
    [7, 65],
    [768, 64],
    [2, 32000],
  ]) {
    it(`${rows} rows of ${cols}`, async () => {
      const values = Float32Array.from({ length: rows * cols }, () => (random() - 0.5) * 30);
      // A causal-style mask in every row but the first: -Infinity scores get exactly 0.
      for (let r = 1; r < rows; r++)
        for (let c = r % cols; c < cols && c > 0; c++) values[r * cols + c] = -Infinity;
      const want = new Float64Array(values.length);
      softmaxKernel(Float64Array.from(values), cols, false, want);
      const got = await backendSoftmax(values, rows, cols);
      for (let r = 0; r < rows; r++) {
        const row = values.subarray(r * cols, (r + 1) * cols);
        const max = Math.max(...row);
        for (let c = 0; c < cols; c++) {
          const i = r * cols + c;
          // f32 rounding of x - max is relative error |x - max| ulps in e^(x - max).
          const ulps = 8 + Math.abs(row[c] - max);
          if (want[i] === 0) expect(got[i], `element ${i}`).toBe(0);
          else
            expect(Math.abs(got[i] - want[i]), `element ${i}`).toBeLessThanOrEqual(ulps * 2 ** -23 * want[i]);
        }
      }
    });
  }

  it('gives NaN rows for NaN input and the same as the JavaScript kernel otherwise', async () => {
    const values = Float32Array.from([1, Number.NaN, 3, 4, 5, 1, 2, 3, 4, 5]);
    const got = await backendSoftmax(values, 2, 5);
    expect(got.slice(0, 5).every(Number.isNaN)).toBe(true);
    const js = await backendSoftmax(values, 2, 5, false);
    for (let i = 5; i < 10; i++) expect(got[i]).toBeCloseTo(js[i], 6);
  });
});
