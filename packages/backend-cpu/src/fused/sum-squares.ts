import type { FusedKernels } from '@loom/tensor';
import { matmulInto, weightProduct } from '../matmul';
import { CpuStorage } from '../storage';
import type { CpuKernelContext } from './kernel-context';

/**
 * totals[index] = Σ x² (`sumSquaresInto`): x · x as a one-by-one product (the matrix-vector kernel, its SIMD
 * lanes and threads), written straight into the slot.
 */
export function sumSquaresKernels(ctx: CpuKernelContext): Pick<FusedKernels, 'sumSquaresInto'> {
  return {
    sumSquaresInto: (totals, x, index) => {
      const values = ctx.get(x);
      const dot = new CpuStorage('f32', 1, false, ctx.precision);
      try {
        matmulInto(ctx.settings, weightProduct(1, 1, values.length), values, values, dot);
        ctx.get(totals).f32[index] = dot.f32[0];
      } finally {
        dot.free();
      }
    },
  };
}
