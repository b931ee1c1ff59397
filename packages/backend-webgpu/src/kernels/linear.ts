import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { tiledMatmul } from './matmul';
import { matvecInto } from './matvec';

/**
 * x Wᵀ + b in one dispatch, the bias added where the product is written: by the matrix-vector kernel for one row,
 * by the tiled product's tiles otherwise (the composite adds it in a second dispatch over the output).
 */
function linear(rt: GpuRuntime, x: TensorInfo, weight: TensorInfo, bias: TensorInfo): GpuStorage {
  const [outFeatures, inFeatures] = weight.shape;
  const rows = inFeatures === 0 ? sizeOf(x.shape.slice(0, -1)) : sizeOf(x.shape) / inFeatures;
  const spec = {
    batch: 1,
    m: rows,
    n: outFeatures,
    k: inFeatures,
    transA: false,
    transB: true,
    aBatchStride: 0,
    bBatchStride: 0,
  };
  if (rows !== 1) return tiledMatmul(rt, x, weight, spec, rt.storage(bias.id));
  const out = rt.alloc(outFeatures, 'f32');
  matvecInto(rt, out, rt.storage(x.id), rt.storage(weight.id), spec, {
    kind: 'bias',
    storage: rt.storage(bias.id),
  });
  return out;
}

/** The linear layer with its bias (`linear` above). */
export function linearKernels(rt: GpuRuntime): Pick<FusedKernels, 'linear'> {
  return { linear: (x, weight, bias) => linear(rt, x, weight, bias) };
}
