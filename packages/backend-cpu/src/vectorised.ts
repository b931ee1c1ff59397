import type { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import { type ActivationKernelName, wasmRuntime } from './wasm/runtime';
import { cpuKernelSettings } from './wasm/settings';

/** Estimated cost of one element of an activation kernel, in microseconds (about a nanosecond). */
const MICROS_PER_ELEMENT = 0.001;
/** Chunks handed out per thread, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 2;
/** Smallest chunk, in elements. */
const MIN_CHUNK = 8192;

/**
 * Runs an element-wise WebAssembly kernel over the first `n - n % 4` elements when every
 * operand lives in the WebAssembly heap, split across threads for long arrays. Its arguments
 * are the byte addresses of `inputs`, then of `out`, then the element count. Returns how many
 * elements were computed (0 when the kernel could not run); the caller finishes the rest.
 */
export function runVectorised(
  kernel: ActivationKernelName,
  inputs: readonly CpuStorage[],
  out: CpuStorage,
  n: number,
): number {
  const runtime = cpuKernelSettings().wasm ? wasmRuntime() : undefined;
  const addresses: number[] = [];
  for (const s of [...inputs, out]) {
    const address = s.address;
    if (address === undefined) return 0;
    addresses.push(address);
  }
  const vector = n - (n % 4);
  if (!runtime || vector === 0) return 0;
  forkJoin(runtime, kernel, vector * MICROS_PER_ELEMENT, (threads) => {
    const count = Math.max(1, Math.min(threads * CHUNKS_PER_THREAD, Math.floor(vector / MIN_CHUNK)));
    const size = Math.ceil(vector / count / 4) * 4;
    const chunks: number[][] = [];
    for (let start = 0; start < vector; start += size) {
      const length = Math.min(size, vector - start);
      chunks.push([...addresses.map((a) => a + 4 * start), length]);
    }
    return chunks;
  });
  return vector;
}
