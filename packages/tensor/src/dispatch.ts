import type { DataId, FusedKernels } from './backend';
import type { DType } from './dtype';
import type { Shape } from './shape';
import { Tensor } from './tensor';

let forceComposite = false;

/**
 * Runs `fn` with every fused op taking its composite path, even where the backend has a
 * fused kernel; the conformance kit uses it to check fused kernels against composites.
 */
export function withComposites<T>(fn: () => T): T {
  const previous = forceComposite;
  forceComposite = true;
  try {
    return fn();
  } finally {
    forceComposite = previous;
  }
}

/**
 * The one place that picks a fused kernel or its composite fallback:
 * `backend.fused[op]?.(...) ?? composite(...)`.
 */
export function dispatchFused<K extends keyof FusedKernels>(
  like: Tensor,
  op: K,
  runKernel: (kernel: FusedKernels[K]) => DataId,
  composite: () => Tensor,
  outShape: Shape,
  dtype: DType,
): Tensor {
  const kernel = like.backend.fused[op];
  if (kernel === undefined || forceComposite) return composite();
  return Tensor.fromStorage(like.backend, runKernel(kernel), outShape, dtype);
}

/** The dispatcher of fused ops that update tensors in place and return nothing. */
export function dispatchFusedInPlace<K extends keyof FusedKernels>(
  like: Tensor,
  op: K,
  runKernel: (kernel: FusedKernels[K]) => void,
  composite: () => void,
): void {
  const kernel = like.backend.fused[op];
  if (kernel === undefined || forceComposite) composite();
  else runKernel(kernel);
}
