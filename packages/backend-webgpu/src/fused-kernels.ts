import type { FusedKernels } from '@loom/tensor';
import { adamwKernels } from './kernels/adamw';
import { attentionKernels } from './kernels/attention';
import { attentionStepKernels } from './kernels/attention-step';
import { pointwiseKernels } from './kernels/fused-pointwise';
import { normKernels } from './kernels/norms';
import { productKernels } from './kernels/products';
import { ropeKernels } from './kernels/rope';
import { selectiveScanKernels } from './kernels/selective-scan';
import { softmaxKernels } from './kernels/softmax';
import { swigluBlockKernels } from './kernels/swiglu-block';
import type { GpuRuntime } from './runtime';

/**
 * The fused kernels this backend has, each a single WGSL kernel (cross-entropy and the SwiGLU block: two; a
 * decode step's attention half: three), joined from the kernel families' slices; the norm backward passes and
 * the cross-entropy's gradient run as composites.
 */
export function fusedKernels(rt: GpuRuntime): Partial<FusedKernels> {
  return {
    ...pointwiseKernels(rt),
    ...normKernels(rt),
    ...softmaxKernels(rt),
    ...attentionKernels(rt),
    ...ropeKernels(rt),
    ...productKernels(rt),
    ...selectiveScanKernels(rt),
    ...swigluBlockKernels(rt),
    ...attentionStepKernels(rt),
    ...adamwKernels(rt),
  };
}
