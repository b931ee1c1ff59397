import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { SIGMOID } from './math';
import { rowsTimesWeight } from './matvec';
import { normedPairs, normedPairsLayout, normedPairsParams } from './normed-pairs';
import { type GpuWeight, gpuWeight, weightProductInto } from './weight-product';

const params = normedPairsLayout().scalar('hidden', 'u32');

/** The three weights of a SwiGLU block, as the kernel binds them. */
interface SwigluWeights {
  readonly w1: GpuWeight;
  readonly w3: GpuWeight;
  readonly w2: GpuWeight;
}

/**
 * x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ with n = rmsnorm(x) in two dispatches whatever the weights' formats, where the
 * separate ops take six: the norm, both products and the gate in one (a unit per hidden channel, `normedPairs`),
 * then the down product and the residual (`weightProductInto`). For the few rows of a decode step; nn calls it for
 * those only.
 */
function swigluBlock(
  rt: GpuRuntime,
  x: TensorInfo,
  normWeight: TensorInfo,
  hidden: number,
  { w1, w3, w2 }: SwigluWeights,
  eps: number,
): GpuStorage {
  const dim = x.shape[x.shape.length - 1];
  const rows = dim === 0 ? 0 : sizeOf(x.shape) / dim;
  const out = rt.alloc(rows * dim, 'f32');
  if (rows * dim === 0) return out;
  const h = rt.alloc(rows * hidden, 'f32'); // [rows, hidden]
  const input = rt.storage(x.id);
  // At most 7 storage buffers (x, g, w1 and w3 with their scales, h), the down product at most 5: both fit in the 8
  // every WebGPU device allows.
  normedPairs(rt, {
    key: 'swigluGate',
    x: input,
    norm: rt.storage(normWeight.id),
    rows,
    dim,
    weights: [w1, w3],
    sources: [{ a: 0, b: 1 }],
    outputs: [{ name: 'h', storage: h }],
    units: hidden,
    layout: params,
    params: params.pack({ ...normedPairsParams(rows, hidden, dim, eps), hidden }),
    select: 'rowA = u;\n  rowB = u;',
    epilogue: 'h[r * p.hidden + u] = d0 * sigmoid_(d0) * d1;',
    helpers: SIGMOID,
  });
  weightProductInto(rt, out, h, w2, rowsTimesWeight(rows, dim, hidden), {
    kind: 'residual',
    storage: input,
  });
  rt.release(h);
  return out;
}

/** The SwiGLU block (`swigluBlock` above). */
export function swigluBlockKernels(rt: GpuRuntime): Pick<FusedKernels, 'swigluBlock'> {
  return {
    swigluBlock: (x, normWeight, w1, w1Scales, w3, w3Scales, w2, w2Scales, eps, formats) => {
      const weights = {
        w1: gpuWeight(rt, w1, w1Scales, formats.w1),
        w3: gpuWeight(rt, w3, w3Scales, formats.w3),
        w2: gpuWeight(rt, w2, w2Scales, formats.w2),
      };
      return swigluBlock(rt, x, normWeight, w1.shape[0], weights, eps);
    },
  };
}
