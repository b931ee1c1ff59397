import type { Backend } from './backend';

let current: Backend | undefined;

/** Makes `backend` the one new tensors are created on. Ops on existing tensors use their own backend. */
export function setBackend(backend: Backend): void {
  current = backend;
}

/** The backend new tensors are created on; throws if none was set. */
export function getBackend(): Backend {
  if (!current) {
    throw new Error(
      'no backend set: call setBackend(new CpuBackend()) (from @loom/backend-cpu) or pass a WebGPU backend first',
    );
  }
  return current;
}
