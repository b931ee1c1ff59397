import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import type { Backend } from '@loom/tensor';
import type { BackendChoice, BackendInfo } from '../protocol';

/** A backend and what the page shows about it. */
export interface PickedBackend {
  readonly backend: Backend;
  readonly info: BackendInfo;
  /** Resolves with the reason when the WebGPU device is lost (never on the CPU). */
  readonly lost: Promise<string>;
}

const never = new Promise<string>(() => {});

/**
 * Most kernel threads of the CPU backend: a decode step's products are a few hundred microseconds, and beyond
 * this many threads the handoffs cost more than the split saves.
 */
const MAX_CPU_THREADS = 8;

/**
 * The CPU backend, with the reason the worker is not on WebGPU. Its kernels run on one Web Worker per core (the
 * model worker included, at most MAX_CPU_THREADS) when the page is cross-origin isolated, else on this worker
 * alone; the page shows the threads that actually started.
 */
export async function cpuBackend(notice: string): Promise<PickedBackend> {
  const cores = crossOriginIsolated ? Math.max(1, navigator.hardwareConcurrency || 1) : 1;
  const backend = new CpuBackend({ threads: Math.min(MAX_CPU_THREADS, cores) });
  const threads = await backend.threadsReady();
  const { wasm } = backend.kernelSettings;
  const adapter = `${threads} thread${threads === 1 ? '' : 's'}, ${wasm ? 'WebAssembly SIMD' : 'JavaScript'} kernels`;
  return { backend, info: { name: 'cpu', adapter, notice }, lost: never };
}

function describeAdapter(info: GPUAdapterInfo): string {
  const parts = [info.vendor, info.architecture, info.description].filter((part) => part !== '');
  return parts.length > 0 ? parts.join(' / ') : 'unnamed adapter';
}

/** WebGPU when the page allows it and an adapter is there, otherwise the CPU with a notice saying why. */
export async function pickBackend(choice: BackendChoice): Promise<PickedBackend> {
  if (choice === 'cpu') return cpuBackend('WebGPU is turned off by ?backend=cpu; running on the CPU.');
  if (navigator.gpu === undefined) {
    return cpuBackend(
      'This browser does not expose WebGPU to workers (navigator.gpu is missing); running on the CPU. ' +
        'Use a recent Chromium, or start it with --enable-unsafe-webgpu.',
    );
  }
  try {
    const backend = await WebGPUBackend.create();
    const { device } = backend;
    const lost = device.lost.then((info) => info.message || `the device was lost (${info.reason})`);
    return { backend, info: { name: 'webgpu', adapter: describeAdapter(device.adapterInfo) }, lost };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return cpuBackend(`WebGPU could not start (${reason}); running on the CPU.`);
  }
}
