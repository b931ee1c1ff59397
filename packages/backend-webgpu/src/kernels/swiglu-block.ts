import { type FusedKernels, sizeOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { SIGMOID } from './math';
import { matvecInto, rowsTimesWeight } from './matvec';
import { normedPairs, normedPairsLayout, normedPairsParams } from './normed-pairs';

const params = normedPairsLayout().scalar('hidden', 'u32');

/**
 * x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ with n = rmsnorm(x) in two dispatches, where the separate ops take six: the norm,
 * both products and the gate in one (a unit per hidden channel, `normedPairs`), then the down product and the
 * residual (`matvecInto`). For the few rows of a decode step; nn calls it for those only.
 */
function swigluBlock(
  rt: GpuRuntime,
  x: TensorInfo,
  normWeight: TensorInfo,
  w1: TensorInfo,
  w3: TensorInfo,
  w2: TensorInfo,
  eps: number,
): GpuStorage {
  const dim = x.shape[x.shape.length - 1];
  const rows = dim === 0 ? 0 : sizeOf(x.shape) / dim;
  const hidden = w1.shape[0];
  const out = rt.alloc(rows * dim, 'f32');
  if (rows * dim === 0) return out;
  const h = rt.alloc(rows * hidden, 'f32'); // [rows, hidden]
  const input = rt.storage(x.id);
  normedPairs(rt, {
    key: 'swigluGate',
    x: input,
    norm: rt.storage(normWeight.id),
    rows,
    dim,
    weights: [rt.storage(w1.id), rt.storage(w3.id)],
    sources: [{ a: 0, b: 1 }],
    outputs: [{ name: 'h', storage: h }],
    units: hidden,
    layout: params,
    params: params.pack({ ...normedPairsParams(rows, hidden, dim, eps), hidden }),
    select: 'rowA = u;\n  rowB = u;',
    epilogue: 'h[r * p.hidden + u] = d0 * sigmoid_(d0) * d1;',
    helpers: SIGMOID,
  });
  matvecInto(rt, out, h, rt.storage(w2.id), rowsTimesWeight(rows, dim, hidden), {
    kind: 'residual',
    storage: input,
  });
  rt.release(h);
  return out;
}

/** The SwiGLU block (`swigluBlock` above). */
export function swigluBlockKernels(rt: GpuRuntime): Pick<FusedKernels, 'swigluBlock'> {
  return { swigluBlock: (x, normWeight, w1, w3, w2, eps) => swigluBlock(rt, x, normWeight, w1, w3, w2, eps) };
}
