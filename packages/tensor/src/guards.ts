import type { Backend } from './backend';
import type { Tensor } from './tensor';

/** The backend shared by all `tensors`; throws, naming the op, if they live on different backends. */
export function sameBackend(op: string, ...tensors: Tensor[]): Backend {
  const backend = tensors[0].backend;
  for (const t of tensors) {
    if (t.backend !== backend) {
      throw new Error(
        `${op}: tensors live on different backends (${backend.name} and ${t.backend.name}); ` +
          'move one with toBackend() before combining them',
      );
    }
  }
  return backend;
}
