import type { WasmRuntime } from '../wasm/runtime';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import { workerSpawner } from './host';
import { ThreadPool } from './pool';

let pool: ThreadPool | undefined;
/** Set when starting a worker failed: products then stay on the calling thread. */
let broken = false;

/**
 * The process-wide pool with at least `threads - 1` workers started (they become usable once
 * ready); undefined when `threads` is 1, or workers or a shared memory are unavailable (a browser page that
 * is not cross-origin isolated, or a page's main thread, which may not block: see workerSpawner).
 */
export function threadPool(runtime: WasmRuntime, threads: number): ThreadPool | undefined {
  if (threads <= 1 || broken || !runtime.heap.shared) return undefined;
  try {
    if (!pool) {
      const spawner = workerSpawner();
      if (!spawner) return undefined;
      pool = new ThreadPool(runtime, spawner);
    }
    pool.grow(threads - 1);
  } catch (error) {
    broken = true;
    console.warn(`matmul: running on one thread, worker threads failed to start: ${String(error)}`);
  }
  return pool;
}

/**
 * Starts the workers `settings` ask for and resolves, once they are ready, with the number of
 * threads a large product will use (the calling thread included).
 */
export async function cpuThreadsReady(settings: CpuKernelSettings): Promise<number> {
  const { threads } = settings;
  const runtime = kernelRuntime(settings);
  const started = runtime ? threadPool(runtime, threads) : undefined;
  if (!started) return 1;
  return 1 + Math.min(threads - 1, await started.whenReady());
}
