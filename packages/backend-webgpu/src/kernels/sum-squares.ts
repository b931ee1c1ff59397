import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuRuntime } from '../runtime';
import { reduceStorage } from './reduce';

/**
 * totals[index] = Σ x²: the sum reduction (`reduceStorage`, chunked and reduced again for long tensors, so it stays
 * accurate and deterministic) folding squares, its result written straight into the slot.
 */
function sumSquaresInto(rt: GpuRuntime, totals: TensorInfo, x: TensorInfo, index: number): void {
  const dims = { outer: 1, size: sizeOf(x.shape), inner: 1 };
  reduceStorage(rt, 'sum', rt.storage(x.id), 'f32', dims, {
    square: true,
    into: { storage: rt.storage(totals.id), slot: index },
  });
}

/** Sums of squares into a slot (`sumSquaresInto` above). */
export function sumSquaresKernels(rt: GpuRuntime): Pick<FusedKernels, 'sumSquaresInto'> {
  return { sumSquaresInto: (totals, x, index) => sumSquaresInto(rt, totals, x, index) };
}
