import { layernormParamGrad, rmsnormWeightGrad, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { normParamGradKernel } from '../src/fused/norm-param-grad';
import { cpuThreadsReady } from '../src/threads/shared-pool';
import { cpuKernelSettings } from '../src/wasm/settings';
import { wasmForTests } from './wasm-for-tests';

/** Seeded values in [-2, 2). */
function values(n: number, seed: number): Float32Array {
  return Float32Array.from(
    { length: n },
    (_, i) => 4 * ((Math.sin(i * 12.9898 + seed * 78.233) * 43758.5453) % 0.5),
  );
}

describe.skipIf(!wasmForTests())("the norms' parameter gradients (WebAssembly)", () => {
  for (const [rows, d] of [
    [768, 128],
    [300, 48],
    [5, 4],
    [130, 66],
  ] as const) {
    it(`[${rows}, ${d}]: match the float64 JavaScript kernel, with the same bits on one thread and on two`, async () => {
      expect(await cpuThreadsReady(cpuKernelSettings({ threads: 2 }))).toBe(2);
      const [x, g] = [values(rows * d, 1), values(rows * d, 2)];
      for (const centred of [true, false]) {
        const want = new Float64Array((centred ? 2 : 1) * d);
        normParamGradKernel(x, g, d, centred, 1e-5, want);
        const got: Float32Array[] = [];
        for (const threads of [1, 2]) {
          const backend = new CpuBackend({ threads });
          const [xt, gt] = [tensor(x, [rows, d], { backend }), tensor(g, [rows, d], { backend })];
          const out = centred ? layernormParamGrad(xt, gt) : rmsnormWeightGrad(xt, gt);
          got.push((await out.data()) as Float32Array);
        }
        expect(got[1]).toEqual(got[0]);
        for (let i = 0; i < want.length; i++)
          expect(Math.abs(got[0][i] - want[i])).toBeLessThan(1e-4 * (1 + Math.abs(want[i])));
      }
    });
  }
});
