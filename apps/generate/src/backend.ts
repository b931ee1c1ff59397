import { totalmem } from 'node:os';
import { CpuBackend, type CpuBackendOptions } from '@loom/backend-cpu';
import type { MemoryLimits } from '@loom/runtime';
import type { Backend } from '@loom/tensor';
import type { BackendName } from './args';

/** A backend and the memory a generation's KV cache may take on it. */
export interface OpenedBackend {
  readonly backend: Backend;
  /** The machine's memory on the CPU; on WebGPU the adapter's largest buffer, for one layer's keys or values. */
  readonly limits: MemoryLimits;
}

/**
 * The backend of that name (the CPU one with `cpu`, its options such as threads); WebGPU goes
 * through dawn.node, loaded only when asked for (it needs a Vulkan driver).
 */
export async function createBackend(name: BackendName, cpu: CpuBackendOptions = {}): Promise<OpenedBackend> {
  if (name === 'cpu') return { backend: new CpuBackend(cpu), limits: { totalBytes: totalmem() } };
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  const backend = await requireNodeWebGPU();
  const { maxBufferSize, maxStorageBufferBindingSize } = backend.limits;
  return { backend, limits: { tensorBytes: Math.min(maxBufferSize, maxStorageBufferBindingSize) } };
}
