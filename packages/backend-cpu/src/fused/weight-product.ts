import { isQuantFormat, QUANT_BLOCK, type TensorInfo, type WeightFormat } from '@loom/tensor';
import { matmulInto, weightProduct } from '../matmul';
import type { CpuStorage } from '../storage';
import type { CpuKernelSettings } from '../wasm/settings';
import { halfMatmulInto } from './half-matmul';
import type { CpuKernelContext } from './kernel-context';
import { quantizedMatmulInto } from './quantized-matmul';

/** A weight [out, in] as a fused op hands it over: its data and scales in `format` (see WeightInputs). */
export interface StoredWeight {
  readonly format: WeightFormat;
  readonly data: CpuStorage;
  readonly scales: CpuStorage;
}

/** The storages of a weight a fused kernel received as data and scales in `format`. */
export function storedWeight(
  ctx: CpuKernelContext,
  format: WeightFormat,
  data: TensorInfo,
  scales: TensorInfo,
): StoredWeight {
  return { format, data: ctx.get(data), scales: ctx.get(scales) };
}

/**
 * out [rows, outFeatures] = x [rows, inner] · Wᵀ on the kernel of W's format: the f32 product, the 16-bit one
 * (widening as it reads) or the quantized one (x quantized per block as llama.cpp does); threads included.
 */
export function weightProductInto(
  settings: CpuKernelSettings,
  w: StoredWeight,
  rows: number,
  outFeatures: number,
  inner: number,
  x: CpuStorage,
  out: CpuStorage,
): void {
  const { format, data, scales } = w;
  if (format === 'f32') {
    matmulInto(settings, weightProduct(rows, outFeatures, inner), x, data, out);
  } else if (isQuantFormat(format)) {
    const product = { type: format, rows, out: outFeatures, blocks: inner / QUANT_BLOCK };
    quantizedMatmulInto(settings, product, x, scales, data, out);
  } else {
    halfMatmulInto(settings, { type: format, rows, out: outFeatures, inner }, x, data, out);
  }
}
