import type { ReduceDims } from '@loom/tensor';
import type { CpuStorage } from './storage';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/**
 * out [outer] (i32) = the index of the first maximum of each row of x [outer, size] (dims.inner is 1), by the
 * WebAssembly kernel `argmax_f32` on this thread (a 32 000-token row takes microseconds). Returns false, computing
 * nothing, when x or out is not in the WebAssembly heap or a row is empty.
 */
export function argmaxRowsInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  dims: ReduceDims,
  out: CpuStorage,
): boolean {
  const runtime = kernelRuntime(settings);
  const [xAddress, outAddress] = [x.address, out.address];
  if (!runtime || xAddress === undefined || outAddress === undefined || dims.size === 0) return false;
  runtime.kernels.argmax_f32(xAddress, outAddress, dims.outer, dims.size, runtime.work.offset);
  return true;
}
