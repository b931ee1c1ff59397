import type { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import { type KernelName, type WasmRuntime, wasmRuntime } from './wasm/runtime';
import { cpuKernelSettings } from './wasm/settings';

/** Estimated cost of one element of a vector kernel, in microseconds (about a nanosecond). */
const MICROS_PER_ELEMENT = 0.001;
/** Chunks handed out per thread, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 2;
/** Smallest chunk, in elements. */
const MIN_CHUNK_ELEMENTS = 8192;

/** The runtime and the byte addresses of `storages` when the kernels are on and all live in the heap. */
function onHeap(storages: readonly CpuStorage[]): { runtime: WasmRuntime; addresses: number[] } | undefined {
  const runtime = cpuKernelSettings().wasm ? wasmRuntime() : undefined;
  if (!runtime) return undefined;
  const addresses: number[] = [];
  for (const s of storages) {
    const address = s.address;
    if (address === undefined) return undefined;
    addresses.push(address);
  }
  return { runtime, addresses };
}

/**
 * Runs `kernel` over `units` units of `unitElements` elements each, split across threads into
 * chunks: each chunk's arguments are the byte addresses of the storages at its first unit, its
 * count (units, or elements when `countElements`), then `extra`.
 */
function split(
  runtime: WasmRuntime,
  kernel: KernelName,
  addresses: readonly number[],
  units: number,
  unitElements: number,
  countElements: boolean,
  extra: readonly number[],
): void {
  const elements = units * unitElements;
  forkJoin(runtime, kernel, elements * MICROS_PER_ELEMENT, (threads) => {
    const wanted = Math.min(threads * CHUNKS_PER_THREAD, Math.floor(elements / MIN_CHUNK_ELEMENTS));
    const size = Math.ceil(units / Math.max(1, wanted));
    const chunks: number[][] = [];
    for (let start = 0; start < units; start += size) {
      const offset = 4 * start * unitElements;
      const count = Math.min(size, units - start) * (countElements ? unitElements : 1);
      chunks.push([...addresses.map((a) => a + offset), count, ...extra]);
    }
    return chunks;
  });
}

/**
 * Runs an element-wise kernel (arguments: byte addresses of `inputs` and of `out`, element
 * count) over the first `n - n % 4` elements when every operand lives in the WebAssembly heap.
 * Returns how many elements were computed (0 when the kernel could not run); the caller
 * finishes the rest.
 */
export function runVectorised(
  kernel: KernelName,
  inputs: readonly CpuStorage[],
  out: CpuStorage,
  n: number,
): number {
  const heap = onHeap([...inputs, out]);
  const vectors = Math.floor(n / 4);
  if (!heap || vectors === 0) return 0;
  split(heap.runtime, kernel, heap.addresses, vectors, 4, true, []);
  return vectors * 4;
}

/**
 * Runs a row kernel (arguments: byte addresses of `inputs` and of `out`, row count, row length)
 * over `rows` rows of `cols` when every operand lives in the WebAssembly heap. Returns false
 * when it could not run.
 */
export function runRowKernel(
  kernel: KernelName,
  inputs: readonly CpuStorage[],
  out: CpuStorage,
  rows: number,
  cols: number,
): boolean {
  const heap = onHeap([...inputs, out]);
  if (!heap) return false;
  if (rows > 0 && cols > 0) split(heap.runtime, kernel, heap.addresses, rows, cols, false, [cols]);
  return true;
}
