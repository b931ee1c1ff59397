import type { ReduceDims } from '@loom/tensor';
import type { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import type { KernelArgs } from './wasm/kernels';
import { ROW_SUM_KERNEL } from './wasm/row-sum-kernel';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/** Estimated cost of one summed element, in microseconds. */
const MICROS_PER_ELEMENT = 0.0003;

/**
 * out [outer] = Σ over the last axis of x [outer, size] (dims.inner is 1) in the WebAssembly
 * row-sum kernel (float64 accumulators), rows split across threads. Returns false, computing
 * nothing, when x or out is not in the WebAssembly heap.
 */
export function sumRowsInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  dims: ReduceDims,
  out: CpuStorage,
): boolean {
  const { outer, size } = dims;
  const runtime = kernelRuntime(settings);
  const [xAddress, outAddress] = [x.address, out.address];
  if (!runtime || xAddress === undefined || outAddress === undefined) return false;
  forkJoin(runtime, settings.threads, ROW_SUM_KERNEL, outer * size * MICROS_PER_ELEMENT, (threads) => {
    const count = Math.min(outer, 2 * threads);
    const chunks: KernelArgs<typeof ROW_SUM_KERNEL>[] = [];
    for (let c = 0; c < count; c++) {
      const [r0, r1] = [Math.floor((outer * c) / count), Math.floor((outer * (c + 1)) / count)];
      chunks.push([xAddress + 4 * r0 * size, outAddress + 4 * r0, r1 - r0, size]);
    }
    return chunks;
  });
  return true;
}
