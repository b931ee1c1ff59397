import { CpuBackend } from '@loom/backend-cpu';
import type { FusedKernels } from '@loom/tensor';
import { makeConfig } from '../src/index';

/** A small llama with grouped-query heads, for the decode tests of the fused ops. */
export const DECODE_CONFIG = makeConfig('llama', {
  vocabSize: 11,
  dim: 16,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 24,
  maxSeqLen: 8,
});

/** A CPU backend whose kernel for fused op `name` counts its calls. */
export function countingBackend(name: 'swigluBlock' | 'attentionStep'): {
  backend: CpuBackend;
  calls: () => number;
} {
  const backend = new CpuBackend();
  const kernels: Record<string, unknown> = backend.fused;
  const kernel = kernels[name];
  if (typeof kernel !== 'function') throw new Error(`the CPU backend has no ${name} kernel`);
  let count = 0;
  const counted = (...args: unknown[]) => {
    count++;
    return kernel(...args);
  };
  const fused: Partial<FusedKernels> = { ...backend.fused, [name]: counted };
  Object.defineProperty(backend, 'fused', { value: fused });
  return { backend, calls: () => count };
}
