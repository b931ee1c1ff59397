import type { CpuStorage } from './storage';
import { runRowKernel } from './vectorised';
import type { NormKernelName } from './wasm/norm-kernel';
import type { CpuKernelSettings } from './wasm/settings';

/**
 * Runs a WebAssembly norm kernel over the rows of `out` (row length d = the weight length) when
 * d is a multiple of 4 and every operand lives in the heap; returns false, computing nothing,
 * otherwise. `rowInputs` are x (and the incoming gradient), `weights` the weight (and bias).
 */
export function normRowsInto(
  settings: CpuKernelSettings,
  kernel: NormKernelName,
  rowInputs: readonly CpuStorage[],
  weights: readonly CpuStorage[],
  out: CpuStorage,
  eps: number,
): boolean {
  const d = weights[0].length;
  if (d % 4 !== 0) return false;
  const rows = d === 0 ? 0 : out.length / d;
  return runRowKernel(settings, kernel, rowInputs, weights, out, rows, d, [eps]);
}
