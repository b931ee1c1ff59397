import type { CpuStorage } from './storage';
import { forkJoin } from './threads/fork-join';
import { checkedArgs } from './wasm/kernels';
import type { KernelName, WasmRuntime } from './wasm/runtime';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/** Estimated cost of one element of a vector kernel, in microseconds (about a nanosecond). */
const MICROS_PER_ELEMENT = 0.001;
/** Chunks handed out per thread, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 2;
/** Smallest chunk, in elements. */
const MIN_CHUNK_ELEMENTS = 8192;

/** The runtime and the byte addresses of `storages` when the kernels are on and all live in the heap. */
export function onHeap(
  settings: CpuKernelSettings,
  storages: readonly CpuStorage[],
): { runtime: WasmRuntime; addresses: number[] } | undefined {
  const runtime = kernelRuntime(settings);
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
 * Runs `kernel` over `units` units of `unitElements` elements each, split across at most
 * `threads` threads into chunks; `argsAt(byteOffset, units)` gives the arguments of the chunk
 * starting that many bytes into the per-unit arrays (checked against the kernel's parameters).
 */
function split(
  runtime: WasmRuntime,
  threads: number,
  kernel: KernelName,
  units: number,
  unitElements: number,
  argsAt: (byteOffset: number, units: number) => number[],
): void {
  const elements = units * unitElements;
  forkJoin(runtime, threads, kernel, elements * MICROS_PER_ELEMENT, (ready) => {
    const wanted = Math.min(ready * CHUNKS_PER_THREAD, Math.floor(elements / MIN_CHUNK_ELEMENTS));
    const size = Math.ceil(units / Math.max(1, wanted));
    const chunks: number[][] = [];
    for (let start = 0; start < units; start += size) {
      chunks.push(checkedArgs(kernel, argsAt(4 * start * unitElements, Math.min(size, units - start))));
    }
    return chunks;
  });
}

/**
 * Runs an element-wise kernel over the first `n - n % 4` elements when every operand lives in
 * the WebAssembly heap; its arguments are the byte addresses of `operands` (inputs, then
 * outputs, or arrays updated in place), the element count, then `extra`. Returns how many
 * elements were computed (0 when the kernel could not run); the caller finishes the rest.
 */
export function runVectorised(
  settings: CpuKernelSettings,
  kernel: KernelName,
  operands: readonly CpuStorage[],
  n: number,
  extra: readonly number[] = [],
): number {
  const heap = onHeap(settings, operands);
  const vectors = Math.floor(n / 4);
  if (!heap || vectors === 0) return 0;
  split(heap.runtime, settings.threads, kernel, vectors, 4, (offset, count) => [
    ...heap.addresses.map((a) => a + offset),
    4 * count,
    ...extra,
  ]);
  return vectors * 4;
}

/**
 * Runs a row kernel over `rows` rows of `cols` when every operand lives in the WebAssembly
 * heap. Its arguments: byte addresses of the row-wise `inputs`, of the `shared` operands (the
 * same for every row, such as norm weights) and of `out`, then the row count, the row length
 * and `extra`. Returns false when it could not run.
 */
export function runRowKernel(
  settings: CpuKernelSettings,
  kernel: KernelName,
  inputs: readonly CpuStorage[],
  shared: readonly CpuStorage[],
  out: CpuStorage,
  rows: number,
  cols: number,
  extra: readonly number[] = [],
): boolean {
  const heap = onHeap(settings, [...inputs, ...shared, out]);
  if (!heap) return false;
  const rowWise = heap.addresses.slice(0, inputs.length);
  const fixed = heap.addresses.slice(inputs.length, inputs.length + shared.length);
  const outAddress = heap.addresses[heap.addresses.length - 1];
  if (rows > 0 && cols > 0) {
    split(heap.runtime, settings.threads, kernel, rows, cols, (offset, count) => [
      ...rowWise.map((a) => a + offset),
      ...fixed,
      outAddress + offset,
      count,
      cols,
      ...extra,
    ]);
  }
  return true;
}
