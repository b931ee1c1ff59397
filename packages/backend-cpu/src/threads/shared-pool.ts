import { type WasmRuntime, wasmRuntime } from '../wasm/runtime';
import { cpuKernelSettings } from '../wasm/settings';
import { nodeWorkerThreads, ThreadPool } from './pool';

let pool: ThreadPool | undefined;
/** Set when starting a worker failed: products then stay on the calling thread. */
let broken = false;

/**
 * The process-wide pool with at least `threads - 1` workers started (they become usable once
 * ready); undefined when `threads` is 1, or worker threads or a shared memory are unavailable.
 */
export function threadPool(runtime: WasmRuntime, threads: number): ThreadPool | undefined {
  if (threads <= 1 || broken || !runtime.heap.shared) return undefined;
  try {
    if (!pool) {
      const workerThreads = nodeWorkerThreads();
      if (!workerThreads) return undefined;
      pool = new ThreadPool(runtime, workerThreads);
    }
    pool.grow(threads - 1);
  } catch (error) {
    broken = true;
    console.warn(`matmul: running on one thread, worker threads failed to start: ${String(error)}`);
  }
  return pool;
}

/**
 * Starts the workers the current settings ask for and resolves, once they are ready, with the
 * number of threads a large product will use (the calling thread included).
 */
export async function cpuThreadsReady(): Promise<number> {
  const { threads, wasm } = cpuKernelSettings();
  const runtime = wasm ? wasmRuntime() : undefined;
  const started = runtime ? threadPool(runtime, threads) : undefined;
  if (!started) return 1;
  return 1 + Math.min(threads - 1, await started.whenReady());
}
