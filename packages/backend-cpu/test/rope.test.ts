import { ropeInverseFrequencies, type Shape } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { ropeInto, ropeKernel } from '../src/fused/rope';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

describe.skipIf(!wasmForTests())('RoPE in WebAssembly SIMD matches the JavaScript kernel', () => {
  const cases: [Shape, number, number][] = [
    [[2, 5, 3, 8], 0, 1],
    [[1, 7, 2, 32], 17, 1],
    [[12, 64, 4, 32], 0, 1],
    [[3, 4, 1, 6], 5, 1],
    [[2, 9, 2, 16], 40, 1.25],
  ];
  for (const [shape, offset, scale] of cases) {
    it(`[${shape}] at offset ${offset}, scale ${scale}`, () => {
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
