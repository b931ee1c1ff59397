import { hostParallelism } from '../threads/host';
import { type WasmRuntime, wasmRuntime } from './runtime';

/** How one CPU backend runs its kernels (see CpuBackendOptions). */
export interface CpuKernelSettings {
  /** Threads a large kernel call may use (the calling thread included); 1 disables workers. */
  readonly threads: number;
  /** Use the WebAssembly SIMD kernels where available (false forces the JavaScript kernels). */
  readonly wasm: boolean;
}

const MAX_DEFAULT_THREADS = 8;

/**
 * The settings `options` ask for, the others at their defaults: the host's parallelism (capped
 * at 8) and the WebAssembly kernels on. Throws when `threads` is not a positive integer.
 */
export function cpuKernelSettings(options: Partial<CpuKernelSettings> = {}): CpuKernelSettings {
  const threads = options.threads ?? defaultThreads();
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(
      `CpuBackend: threads must be a positive integer, got ${threads}; pass 1 to run on the calling thread only`,
    );
  }
  return { threads, wasm: options.wasm ?? true };
}

/** The WebAssembly runtime when `settings` allow its kernels and the engine has it. */
export function kernelRuntime(settings: CpuKernelSettings): WasmRuntime | undefined {
  return settings.wasm ? wasmRuntime() : undefined;
}

/** The host's parallelism (Node, or a cross-origin isolated page's Web Worker), capped; 1 where workers cannot start. */
function defaultThreads(): number {
  return Math.max(1, Math.min(MAX_DEFAULT_THREADS, hostParallelism()));
}
