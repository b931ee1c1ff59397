import { CpuBackend } from '@loom/backend-cpu';
import type { Backend } from '@loom/tensor';
import type { BackendName } from './options';

/** The process-wide dawn.node backend, loaded only when asked for (CPU runs never load dawn.node). */
async function webgpu(): Promise<Backend> {
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  try {
    return await requireNodeWebGPU();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`--backend webgpu: ${reason}; or train with --backend cpu`);
  }
}

/** The compute backend a run asked for (without autograd; the trainer wraps it). */
export async function createBackend(name: BackendName): Promise<Backend> {
  switch (name) {
    case 'cpu':
      return new CpuBackend();
    case 'webgpu':
      return webgpu();
  }
}
