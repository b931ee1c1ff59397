import type { FusedKernels } from '@loom/tensor';
import { adamwKernels } from './kernels/adamw';
import { attentionKernels } from './kernels/attention';
import { attentionStepKernels } from './kernels/attention-step';
import { pointwiseKernels } from './kernels/fused-pointwise';
import { linearKernels } from './kernels/linear';
import { normGradKernels } from './kernels/norm-grads';
import { normKernels } from './kernels/norms';
import { productKernels } from './kernels/products';
import { ropeKernels } from './kernels/rope';
import { selectiveScanKernels } from './kernels/selective-scan';
import { softmaxKernels } from './kernels/softmax';
import { sumSquaresKernels } from './kernels/sum-squares';
import { swigluBlockKernels } from './kernels/swiglu-block';
import { weightRowsKernels } from './kernels/weight-rows';
import type { GpuRuntime } from './runtime';

/**
 * The fused kernels this backend has, each a single WGSL kernel (cross-entropy and the SwiGLU block: two; a
 * decode step's attention half: three; a norm's parameter gradients: two), joined from the kernel families'
 * slices; the cross-entropy's gradient runs as a composite.
 */
export function fusedKernels(rt: GpuRuntime): Partial<FusedKernels> {
  return {
    ...pointwiseKernels(rt),
    ...normKernels(rt),
    ...normGradKernels(rt),
    ...softmaxKernels(rt),
    ...attentionKernels(rt),
    ...ropeKernels(rt),
    ...productKernels(rt),
    ...selectiveScanKernels(rt),
    ...swigluBlockKernels(rt),
    ...attentionStepKernels(rt),
    ...adamwKernels(rt),
    ...linearKernels(rt),
    ...sumSquaresKernels(rt),
    ...weightRowsKernels(rt),
  };
}
