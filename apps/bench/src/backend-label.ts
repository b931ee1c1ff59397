import { CpuBackend } from '@loom/backend-cpu';
import type { Backend } from '@loom/tensor';

/** How a note names where Loom ran: "2 CPU thread(s)", or "the webgpu backend". */
export function backendLabel(backend: Backend, name: string): string {
  return backend instanceof CpuBackend
    ? `${backend.kernelSettings.threads} CPU thread(s)`
    : `the ${name} backend`;
}
