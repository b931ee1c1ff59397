import { CpuBackend } from '@loom/backend-cpu';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, type GradcheckOptions, gradcheck } from '../src/index';
import { caseInputs, gradCases } from './cases';

/**
 * Runs every case of cases.ts through gradcheck on `inner`: the gradient must match central
 * finite differences within `options`, and computing it must leave no tensor alive.
 */
function describeGradcheck(title: string, inner: CpuBackend, options: GradcheckOptions): void {
  describe(title, () => {
    const backend = new AutodiffBackend(inner);
    for (const c of gradCases) {
      it(c.name, async () => {
        const inputs = caseInputs(backend, c, 3);
        const before = backend.liveCount();
        const result = await gradcheck(c.fn, inputs, options);
        expect(result.ok, result.message).toBe(true);
        expect(result.checked).toBeGreaterThan(0);
        expect(backend.liveCount(), 'tensors left alive by the gradient computation').toBe(before);
        for (const t of inputs) t.dispose();
      });
    }
  });
}

/**
 * Float64 kernels and float64 perturbations: the worst difference over all cases is about 2e-9
 * (rounding in the finite difference, ~1e-16 |f| / eps), five times below atol; a value rounded
 * to float32 on the way (~6e-8 |f| / eps) would miss by orders of magnitude.
 */
describeGradcheck('gradcheck in float64', new CpuBackend({ precision: 'f64' }), {
  eps: 1e-6,
  atol: 1e-8,
  rtol: 1e-7,
});

/** The float32 kernels (WebAssembly SIMD included) have the right gradients too, at float32 tolerances. */
describeGradcheck('gradcheck in float32', new CpuBackend(), { eps: 1e-2, atol: 2e-3, rtol: 2e-2 });
