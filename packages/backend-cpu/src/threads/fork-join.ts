import type { KernelName, WasmRuntime } from '../wasm/runtime';
import { MAX_CHUNKS } from './control';
import { kernelParamKinds, untypedKernel } from './pool';
import { threadPool } from './shared-pool';

/** Work estimated below this many microseconds stays on the calling thread: a handoff to a spinning worker costs about 1-3. */
export const PARALLEL_MIN_MICROS = 15;
/**
 * Waking a sleeping worker costs the main thread about 10 microseconds (a futex wake-up; much
 * more on a busy machine) and the worker as long again to start; only jobs longer than this
 * wake one, shorter ones use workers that are still spinning after the previous job.
 */
const WAKE_MIN_MICROS = 100;
/** A job that starts within this many milliseconds of the previous split one is part of a stream: worth a wake-up too. */
const STREAM_GAP_MS = 0.2;

/** When the last job split across threads finished (performance.now()). */
let lastSplitEnd = Number.NEGATIVE_INFINITY;

/**
 * Runs `kernel` once per argument list of `chunksFor(threads)`, on the calling thread and on
 * the ready workers of the pool (`threads` threads at most, the calling one included), and
 * returns when all are done. `micros` estimates the whole
 * job; short jobs run on the calling thread alone (`chunksFor(1)`), as do jobs of more chunks
 * than the pool's job block holds.
 */
export function forkJoin(
  runtime: WasmRuntime,
  threads: number,
  kernel: KernelName,
  micros: number,
  chunksFor: (threads: number) => readonly (readonly number[])[],
): void {
  const pool = micros >= PARALLEL_MIN_MICROS ? threadPool(runtime, threads) : undefined;
  const workers = pool ? pool.readyCount(threads - 1) : 0;
  const chunks = chunksFor(1 + workers);
  if (pool && chunks.length > 1 && chunks.length <= MAX_CHUNKS) {
    const wake = micros >= WAKE_MIN_MICROS || performance.now() - lastSplitEnd < STREAM_GAP_MS;
    pool.run({ kernel, chunks }, workers, wake);
    lastSplitEnd = performance.now();
    return;
  }
  const arity = kernelParamKinds(kernel).length;
  const run = untypedKernel(runtime, kernel);
  for (const chunk of chunks) {
    if (chunk.length !== arity) {
      throw new Error(`forkJoin: kernel ${kernel} takes ${arity} arguments, a chunk has ${chunk.length}`);
    }
    run(...chunk, runtime.work.offset);
  }
}
