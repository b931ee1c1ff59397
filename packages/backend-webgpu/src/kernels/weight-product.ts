import { isQuantFormat, type MatmulSpec, type TensorInfo, type WeightFormat } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { halfMatmulInto } from './half-matmul';
import { matvecInto } from './matvec';
import type { ProductAddend } from './product-addend';
import { quantizedMatmulInto } from './quantized-matmul';

/** A weight as a fused op takes it (see WeightInputs): its format, data and scales (read when quantized only). */
export interface GpuWeight {
  readonly format: WeightFormat;
  readonly data: GpuStorage;
  readonly scales: GpuStorage;
}

/** The storages of a weight given as a fused op's two inputs. */
export function gpuWeight(
  rt: GpuRuntime,
  data: TensorInfo,
  scales: TensorInfo,
  format: WeightFormat,
): GpuWeight {
  return { format, data: rt.storage(data.id), scales: rt.storage(scales.id) };
}

/**
 * x [spec.batch, spec.k] · Wᵀ (`spec` as `rowsTimesWeight` gives it) for a weight of any format, written into `out`
 * plus `add` where given, in one dispatch: the f32 matrix-vector kernel, or the 16-bit or quantized product.
 */
export function weightProductInto(
  rt: GpuRuntime,
  out: GpuStorage,
  x: GpuStorage,
  w: GpuWeight,
  spec: MatmulSpec,
  add?: ProductAddend,
): void {
  const { format, data, scales } = w;
  if (format === 'f32') matvecInto(rt, out, x, data, spec, add);
  else if (isQuantFormat(format))
    quantizedMatmulInto(rt, out, x, { scales, quants: data }, format, spec, add);
  else halfMatmulInto(rt, out, x, data, format, spec, add);
}
