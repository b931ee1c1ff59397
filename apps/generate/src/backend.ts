import { CpuBackend } from '@loom/backend-cpu';
import { WebGPUBackend } from '@loom/backend-webgpu';
import type { Backend } from '@loom/tensor';
import { create, globals } from 'webgpu';
import type { BackendName } from './args';

/** dawn.node's GPU object, made on first use; it must stay referenced for the whole process. */
let gpu: GPU | undefined;

/** The backend of that name; WebGPU goes through Dawn (`webgpu` package), which needs a Vulkan driver. */
export async function createBackend(name: BackendName): Promise<Backend> {
  if (name === 'cpu') return new CpuBackend();
  if (gpu === undefined) {
    Object.assign(globalThis, globals);
    gpu = create([]);
  }
  return WebGPUBackend.create({ gpu });
}
