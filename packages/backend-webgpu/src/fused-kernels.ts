import type { FusedKernels } from '@loom/tensor';
import { attention } from './kernels/attention';
import { softmaxCrossEntropy } from './kernels/cross-entropy';
import { geglu } from './kernels/geglu';
import { geluGrad } from './kernels/gelu-grad';
import { halfMatmul } from './kernels/half-matmul';
import { layernorm } from './kernels/layernorm';
import { quantizedMatmul } from './kernels/quantized-matmul';
import { rmsnorm } from './kernels/rmsnorm';
import { rope } from './kernels/rope';
import { selectiveScan, selectiveScanGrad } from './kernels/selective-scan';
import { softcap } from './kernels/softcap';
import { softmax } from './kernels/softmax';
import { swiglu } from './kernels/swiglu';
import type { GpuRuntime } from './runtime';

/**
 * The fused kernels this backend has, each a single WGSL kernel (cross-entropy: two); the
 * norm backward passes run as composites.
 */
export function fusedKernels(rt: GpuRuntime): Partial<FusedKernels> {
  return {
    rmsnorm: (x, weight, eps) => rmsnorm(rt, x, weight, eps),
    layernorm: (x, weight, bias, eps) => layernorm(rt, x, weight, bias, eps),
    rope: (x, offset, freqs, scale) => rope(rt, x, offset, freqs, scale),
    attention: (q, k, v, spec) => attention(rt, q, k, v, spec),
    swiglu: (gate, up) => swiglu(rt, gate, up),
    softmax: (x) => softmax(rt, 'softmax', x),
    logSoftmax: (x) => softmax(rt, 'logSoftmax', x),
    softmaxCrossEntropy: (logits, targets, ignoreIndex) =>
      softmaxCrossEntropy(rt, logits, targets, ignoreIndex),
    geglu: (gate, up) => geglu(rt, gate, up),
    geluGrad: (x, grad) => geluGrad(rt, x, grad),
    softcap: (x, cap) => softcap(rt, x, cap),
    quantizedMatmul: (x, scales, quants, type) => quantizedMatmul(rt, x, scales, quants, type),
    halfMatmul: (x, packed, type) => halfMatmul(rt, x, packed, type),
    selectiveScan: (x, delta, a, b, c, dSkip) => selectiveScan(rt, x, delta, a, b, c, dSkip),
    selectiveScanGrad: (x, delta, a, b, c, dSkip, g) => selectiveScanGrad(rt, x, delta, a, b, c, dSkip, g),
  };
}
