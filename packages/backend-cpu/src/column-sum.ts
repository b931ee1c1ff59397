import type { ReduceDims } from '@loom/tensor';
import { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import { COLUMN_SUM_KERNEL } from './wasm/column-sum-kernel';
import type { KernelArgs } from './wasm/kernels';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/** Estimated cost of one summed element, in microseconds. */
const MICROS_PER_ELEMENT = 0.0005;
/** Columns per chunk handed to a thread: at least this many, a multiple of 4. */
const MIN_CHUNK_COLUMNS = 64;

/**
 * out [outer, inner] = Σ over the middle axis of x [outer, size, inner] in the WebAssembly
 * column-sum kernel (float64 accumulators), column blocks split across threads; the last
 * inner % 4 columns in JavaScript. Returns false, computing nothing, when x or out is not in
 * the WebAssembly heap or inner < 4.
 */
export function sumColumnsInto(
  settings: CpuKernelSettings,
  x: CpuStorage,
  dims: ReduceDims,
  out: CpuStorage,
): boolean {
  const { outer, size, inner } = dims;
  const runtime = kernelRuntime(settings);
  const [xAddress, outAddress] = [x.address, out.address];
  const vectorColumns = inner - (inner % 4);
  if (!runtime || xAddress === undefined || outAddress === undefined || vectorColumns === 0) return false;
  const scratch = new CpuStorage('f32', 2 * vectorColumns * outer, false);
  try {
    const accAddress = scratch.address;
    if (accAddress === undefined) return false;
    const micros = outer * size * inner * MICROS_PER_ELEMENT;
    forkJoin(runtime, settings.threads, COLUMN_SUM_KERNEL, micros, (threads) => {
      const blocks = Math.max(1, Math.min(2 * threads, Math.floor(vectorColumns / MIN_CHUNK_COLUMNS)));
      const width = Math.ceil(vectorColumns / blocks / 4) * 4;
      const chunks: KernelArgs<typeof COLUMN_SUM_KERNEL>[] = [];
      for (let o = 0; o < outer; o++) {
        for (let j = 0; j < vectorColumns; j += width) {
          chunks.push([
            xAddress + 4 * (o * size * inner + j),
            outAddress + 4 * (o * inner + j),
            accAddress + 8 * (o * vectorColumns + j),
            size,
            Math.min(width, vectorColumns - j),
            inner,
          ]);
        }
      }
      return chunks;
    });
  } finally {
    scratch.free();
  }
  const xv = x.values;
  const ov = out.values;
  for (let o = 0; o < outer; o++) {
    for (let j = vectorColumns; j < inner; j++) {
      let sum = 0;
      for (let s = 0; s < size; s++) sum += xv[(o * size + s) * inner + j];
      ov[o * inner + j] = sum;
    }
  }
  return true;
}
