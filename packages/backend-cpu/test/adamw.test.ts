import type { AdamWSpec } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { adamwInPlace, adamwKernel } from '../src/fused/adamw';
import { CpuStorage } from '../src/storage';
import { SETTINGS, wasmForTests } from './wasm-for-tests';

let seed = 3;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

const SPEC: AdamWSpec = {
  lr: 1e-3,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0.1,
  c1: 0.19,
  c2: 0.0199,
};

describe.skipIf(!wasmForTests())('AdamW in WebAssembly SIMD matches the float64 JavaScript kernel', () => {
  for (const [n, gradScale] of [
    [1, 1],
    [5, 1],
    [64, 1],
    [1001, 1],
    [100_003, 1],
    [1001, 0.3],
  ]) {
    it(`${n} parameters, three steps, the gradient scaled by ${gradScale}`, () => {
      const spec = { ...SPEC, gradScale };
      const init = [0, 1, 2, 3].map((k) =>
        Float64Array.from({ length: n }, () => Math.fround((random() - 0.5) * (k === 3 ? 1e-4 : 1))),
      );
      for (const v of init[3].keys()) init[3][v] = Math.abs(init[3][v]);
      const storages = init.map((values) => {
        const s = new CpuStorage('f32', n);
        s.values.set(values);
        return s;
      });
      const [p, g, m, v] = storages;
      const want = init.map((a) => a.slice());
      for (let step = 0; step < 3; step++) {
        adamwInPlace(SETTINGS, p, g, m, v, spec);
        adamwKernel(want[0], want[1], want[2], want[3], spec);
      }
      // Absolute bounds a few f32 ulps above each array's magnitude (p, m up to 0.5; v up to 2.5e-3; three steps).
      const bounds = [4e-7, 0, 4e-7, 4e-9];
      for (const [k, name] of ['parameter', 'gradient', 'first moment', 'second moment'].entries()) {
        let worst = 0;
        for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(storages[k].values[i] - want[k][i]));
        expect(worst, `${name}: largest absolute error`).toBeLessThanOrEqual(bounds[k]);
      }
      for (const s of storages) s.free();
    });
  }
});
