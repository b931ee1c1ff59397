import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import type { Backend } from '@loom/tensor';
import type { BackendName } from './options';

/**
 * dawn.node's GPU object. It must stay referenced for the whole process (once collected,
 * dawn.node crashes at random), so it lives here and is made once.
 */
let nodeGpu: GPU | undefined;

async function webgpu(): Promise<Backend> {
  if (!nodeGpu) {
    const { create, globals } = await import('webgpu');
    Object.assign(globalThis, globals);
    nodeGpu = create([]);
  }
  try {
    return await WebGPUBackend.create({ gpu: nodeGpu });
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
