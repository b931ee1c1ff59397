import type { FloatArray } from '../precision';
import type { CpuStorage } from '../storage';
import { MAX_CHUNKS } from '../threads/control';
import { forkJoin, PARALLEL_MIN_MICROS } from '../threads/fork-join';
import { checkedArgs, type KernelName } from '../wasm/kernels';
import type { WasmRuntime } from '../wasm/runtime';

/** Chunks of outputs per thread, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 2;

/**
 * Runs `kernel` over the outputs [0, out) of a product whose weight is read in place (quantized or 16-bit), split
 * into contiguous ranges across up to `threads` threads; `argsFor(j0, j1)` gives the arguments for outputs [j0, j1).
 * `micros` estimates the whole job: a short one stays on the calling thread in one range.
 */
export function forkJoinByOutput<K extends KernelName>(
  runtime: WasmRuntime,
  threads: number,
  kernel: K,
  micros: number,
  out: number,
  argsFor: (j0: number, j1: number) => readonly number[],
): void {
  forkJoin(runtime, threads, kernel, micros, (ready) => {
    const wanted = ready === 1 || micros < PARALLEL_MIN_MICROS ? 1 : ready * CHUNKS_PER_THREAD;
    const count = Math.min(MAX_CHUNKS, wanted, out);
    return Array.from({ length: count }, (_, t) =>
      checkedArgs(kernel, argsFor(Math.floor((out * t) / count), Math.floor((out * (t + 1)) / count))),
    );
  });
}

/**
 * Throws unless each storage holds the number of values the product needs (the kernels trust these sizes), naming
 * the operand; `product` describes the product in the message, e.g. "[1, 768] x q8_0 [2048, 768]".
 */
export function checkOperandSizes(
  op: string,
  product: string,
  need: readonly (readonly [name: string, storage: CpuStorage, values: number])[],
): void {
  for (const [name, storage, values] of need) {
    if (storage.length !== values) {
      throw new Error(`${op}: ${name} holds ${storage.length} values, but ${product} needs ${values}`);
    }
  }
}

/** out[r, j] = x[r, :] · row for every row r of x [rows, inner]: a portable kernel's step for output j of `outs`. */
export function dotRowsInto(
  x: FloatArray,
  row: Float64Array | Float32Array,
  rows: number,
  out: FloatArray,
  outs: number,
  j: number,
): void {
  const inner = row.length;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    const xo = r * inner;
    for (let i = 0; i < inner; i++) sum += x[xo + i] * row[i];
    out[r * outs + j] = sum;
  }
}
