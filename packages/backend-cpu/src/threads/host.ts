import { browserSpawner } from './browser-spawner';
import { nodeSpawner } from './node-spawner';
import type { WorkerSpawner } from './spawner';

/** The worker_threads module where the host is Node (or compatible), else undefined. */
export function nodeWorkerThreads(): typeof import('node:worker_threads') | undefined {
  if (typeof process === 'undefined' || typeof process.getBuiltinModule !== 'function') return undefined;
  return process.getBuiltinModule('node:worker_threads');
}

/**
 * Whether this thread is a browser's dedicated worker of a cross-origin isolated page: the only browser
 * thread where kernel workers can share the memory (SharedArrayBuffer) and the caller may block in
 * `Atomics.wait` while they finish. A page's main thread may not block, so it runs kernels on one thread.
 */
function isolatedBrowserWorker(): boolean {
  return (
    typeof Worker === 'function' &&
    globalThis.crossOriginIsolated === true &&
    'DedicatedWorkerGlobalScope' in globalThis
  );
}

/** How this host starts kernel workers, or undefined where it cannot (then kernels run on one thread). */
export function workerSpawner(): WorkerSpawner | undefined {
  const workerThreads = nodeWorkerThreads();
  if (workerThreads) return nodeSpawner(workerThreads);
  return isolatedBrowserWorker() ? browserSpawner() : undefined;
}

/** The host's parallelism: Node's available parallelism, the browser's hardwareConcurrency; 1 where no worker can start. */
export function hostParallelism(): number {
  if (nodeWorkerThreads()) return process.getBuiltinModule('node:os').availableParallelism();
  if (!isolatedBrowserWorker()) return 1;
  return Math.max(1, navigator.hardwareConcurrency || 1);
}
