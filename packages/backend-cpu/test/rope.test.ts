import { ropeInverseFrequencies, type Shape } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { ropeInto, ropeKernel } from '../src/fused/rope';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

describe.skipIf(!wasmForTests())('RoPE in WebAssembly SIMD matches the JavaScript kernel', () => {
  const cases: [Shape, readonly number[], number][] = [
    [[2, 5, 3, 8], [0, 0], 1],
    [[1, 7, 2, 32], [17], 1],
    [[12, 64, 4, 32], new Array<number>(12).fill(0), 1],
    [[3, 4, 1, 6], [5, 5, 5], 1],
    [[2, 9, 2, 16], [40, 40], 1.25],
    // Entries at their own positions, some repeated side by side (one chunk), one past any table so far.
    [[6, 1, 3, 16], [4, 4, 90, 0, 300, 4], 1],
    [[3, 2, 2, 8], [10, 3, 3], 0.9],
  ];
  for (const [shape, offset, scale] of cases) {
    it(`[${shape}] at offsets ${offset}, scale ${scale}`, () => {
      const freqs = ropeInverseFrequencies(shape[3], 10000).map((f, i) => (i % 3 === 0 ? f / 4 : f));
      const n = shape.reduce((a, b) => a * b, 1);
      const x = new CpuStorage('f32', n);
      for (let i = 0; i < n; i++) x.values[i] = Math.sin(i * 0.37) * 3;
      const out = new CpuStorage('f32', n);
      ropeInto(SETTINGS, x, shape, offset, freqs, scale, out);
      const want = new Float32Array(n);
      ropeKernel(x.f32, shape, offset, freqs, scale, want);
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(out.values[i] - want[i]));
      // Values up to 3 · √2: the products round to f32 before the sum here, after it in JavaScript.
      expect(worst).toBeLessThanOrEqual(4 * 2 ** -23 * 4.25 * scale);
      x.free();
      out.free();
    });
  }
});

describe.skipIf(!wasmForTests())('RoPE tables cached across calls give the values computed per call', () => {
  /** Runs ropeInto and ropeKernel on x [1, t, 2, 16] at `offset`, returning the largest difference. */
  function worstAt(freqs: readonly number[], t: number, offset: number, scale: number): number {
    const shape: Shape = [1, t, 2, 16];
    const n = t * 32;
    const x = new CpuStorage('f32', n);
    for (let i = 0; i < n; i++) x.values[i] = Math.cos(i * 0.53 + offset) * 2;
    const out = new CpuStorage('f32', n);
    ropeInto(SETTINGS, x, shape, [offset], freqs, scale, out);
    const want = new Float32Array(n);
    ropeKernel(x.f32, shape, [offset], freqs, scale, want);
    let worst = 0;
    for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(out.values[i] - want[i]));
    x.free();
    out.free();
    return worst;
  }

  it('over a prefill, decode steps past the first table size, a truncation, a gap and other tables', () => {
    const freqs = ropeInverseFrequencies(16, 10000);
    const bound = 4 * 2 ** -23 * 2.9;
    // A prefill, then one position at a time well past the table's first 64 rows.
    const calls: [readonly number[], number, number, number][] = [[freqs, 5, 0, 1]];
    for (let offset = 5; offset < 140; offset++) calls.push([freqs, 1, offset, 1]);
    calls.push(
      [freqs, 3, 40, 1], // back into rows already computed (a truncated session)
      [freqs, 1, 400, 1], // past the rows computed: tables of this call only
      [[...freqs], 1, 141, 1], // the same values in another array
      [freqs, 2, 0, 0.8], // another scale
      [freqs.map((f) => f / 2), 4, 0, 1], // another table
      [freqs, 1, 141, 0.8], // the scaled table, not contiguous with its rows: per call
    );
    for (const [table, t, offset, scale] of calls) {
      expect(worstAt(table, t, offset, scale), `t ${t} at ${offset}, scale ${scale}`).toBeLessThanOrEqual(
        bound * scale,
      );
    }
  });
});
