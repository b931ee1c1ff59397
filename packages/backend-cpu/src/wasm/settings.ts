import { nodeWorkerThreads } from '../threads/pool';

/** How the CPU backend runs its matrix products. */
export interface CpuKernelSettings {
  /** Threads a large product may use (the calling thread included); 1 disables workers. */
  readonly threads: number;
  /** Use the WebAssembly SIMD kernels where available (false forces the JavaScript kernels). */
  readonly wasm: boolean;
}

const MAX_DEFAULT_THREADS = 8;

let current: CpuKernelSettings = { threads: defaultThreads(), wasm: true };

/** Changes some settings; the others keep their values. */
export function configureCpuKernels(options: Partial<CpuKernelSettings>): void {
  const threads = options.threads ?? current.threads;
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`configureCpuKernels: threads must be a positive integer, got ${threads}`);
  }
  current = { threads, wasm: options.wasm ?? current.wasm };
}

export function cpuKernelSettings(): CpuKernelSettings {
  return current;
}

/** The host's parallelism (Node), capped; 1 where worker threads are unavailable. */
function defaultThreads(): number {
  if (!nodeWorkerThreads()) return 1;
  const os = process.getBuiltinModule('node:os');
  return Math.max(1, Math.min(MAX_DEFAULT_THREADS, os.availableParallelism()));
}
