import type { FusedKernels } from '@loom/tensor';
import type { GpuRuntime } from '../runtime';
import { halfMatmul } from './half-matmul';
import { quantizedMatmul } from './quantized-matmul';

/** The products against stored weights: x times a block-quantized or a 16-bit W, read in their packed form. */
export function productKernels(rt: GpuRuntime): Pick<FusedKernels, 'quantizedMatmul' | 'halfMatmul'> {
  return {
    quantizedMatmul: (x, scales, quants, type) => quantizedMatmul(rt, x, scales, quants, type),
    halfMatmul: (x, packed, type) => halfMatmul(rt, x, packed, type),
  };
}
