import { CpuBackend } from '@loom/backend-cpu';
import type { Backend } from '@loom/tensor';
import type { BackendName } from './args';

/** The backend of that name; WebGPU goes through dawn.node, loaded only when asked for (it needs a Vulkan driver). */
export async function createBackend(name: BackendName): Promise<Backend> {
  if (name === 'cpu') return new CpuBackend();
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  return requireNodeWebGPU();
}
