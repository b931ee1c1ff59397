import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { type HalfType, HalfWeight } from '../half-weight';
import { matmul } from '../matmul';
import { QuantizedWeight, type QuantType, quantFormat } from '../quantized-weight';
import type { Tensor } from '../tensor';
import { type InputSpec, REDUCTION, type Tolerance } from './case';
import { halfMatmul } from './half-matmul';
import { quantizedMatmul, RMS_CODE } from './quantized-matmul';

/** A weight [out, in] a product reads: f32 values, a 16-bit `HalfWeight` or a block-quantized `QuantizedWeight`. */
export type ProductWeight = Tensor | HalfWeight | QuantizedWeight;

/** How a fused op's kernel reads a weight it takes as two tensor inputs (see `weightInputs`). */
export type WeightFormat = 'f32' | HalfType | QuantType;

/**
 * A weight as two tensor inputs of a fused op, whatever its format: `data` (the f32 values [out, in], the packed
 * 16-bit words [out, in / 2] or the quantized codes [out, words]) and `scales` (a quantized weight's; for the other
 * formats `data` again, which kernels do not read).
 */
export interface WeightInputs {
  readonly data: Tensor;
  readonly scales: Tensor;
  readonly format: WeightFormat;
}

/** Whether `format` is block-quantized (its kernels read the scales). */
export function isQuantFormat(format: WeightFormat): format is QuantType {
  return format !== 'f32' && format !== 'f16' && format !== 'bf16';
}

/** x [..., in] · Wᵀ -> [..., out] for a weight of any format: `matmul`, `halfMatmul` or `quantizedMatmul`. */
export function weightMatmul(x: Tensor, w: ProductWeight): Tensor {
  if (w instanceof QuantizedWeight) return quantizedMatmul(x, w);
  if (w instanceof HalfWeight) return halfMatmul(x, w);
  return matmul(x, w, { transB: true });
}

export function weightInputs(w: ProductWeight): WeightInputs {
  if (w instanceof QuantizedWeight) return { data: w.quants, scales: w.scales, format: w.type };
  if (w instanceof HalfWeight) return { data: w.packed, scales: w.packed, format: w.type };
  return { data: w, scales: w, format: 'f32' };
}

/**
 * Throws unless a fused op's `tensors` and the tensors `weights` hold live on one backend, and the tensors and the f32
 * weights are f32 (a compact weight's words were checked when it was made).
 */
export function checkOperands(
  op: string,
  tensors: readonly Tensor[],
  weights: readonly WeightInputs[],
): void {
  const held = weights.flatMap(({ data, scales, format }) =>
    isQuantFormat(format) ? [data, scales] : [data],
  );
  sameBackend(op, ...tensors, ...held);
  const values = weights.filter(({ format }) => format === 'f32').map(({ data }) => data);
  for (const t of [...tensors, ...values]) assertDType(op, t.dtype, ['f32']);
}

/**
 * x [..., in] · Wᵀ for a weight given as a fused op's two inputs (see WeightInputs), through the product op of its
 * format: what a composite runs.
 */
export function productOf(x: Tensor, data: Tensor, scales: Tensor, format: WeightFormat): Tensor {
  if (format === 'f32') return matmul(x, data, { transB: true });
  if (isQuantFormat(format)) return quantizedMatmul(x, new QuantizedWeight(format, scales, data));
  return halfMatmul(x, new HalfWeight(format, data));
}

/**
 * A conformance case's two inputs for a random weight [out, in] of `format`, its values of rms 1 / √in (so each
 * product's outputs are about as large as its inputs): normal f32 values, 16-bit words, or every code word random
 * with scales uniform of either sign; the unread scales of the unquantized formats a single value.
 */
export function weightCaseInputs(format: WeightFormat, out: number, inner: number): [InputSpec, InputSpec] {
  const rms = 1 / Math.sqrt(inner);
  const unread: InputSpec = { shape: [1] };
  if (format === 'f32') return [{ shape: [out, inner], dist: { kind: 'normal', scale: rms } }, unread];
  if (format === 'f16' || format === 'bf16') {
    return [{ shape: [out, inner / 2], dist: { kind: 'halves', type: format, scale: rms } }, unread];
  }
  const { values, words, scales } = quantFormat(format);
  const blocks = inner / values;
  const bound = (Math.sqrt(3) * rms) / RMS_CODE[format];
  return [
    { shape: [out, blocks * words], dist: { kind: 'ints', low: -2_147_483_648, high: 2_147_483_647 } },
    { shape: [out, blocks * scales], dist: { kind: 'uniform', low: -bound, high: bound } },
  ];
}

/**
 * The tolerance of a case of a fused block whose products read weights of `formats` over inner sizes up to `inner`:
 * f32 sums in another order where none is quantized (16-bit values widen exactly); where one is, the error of
 * kernels that quantize their activations to int8 as llama.cpp does (each value moves by up to max|x| / 254, see
 * quantizedMatmul's cases), carried through the block: with outputs about 1 (weights of rms 1 / √in) the CPU's
 * worst was 0.027 (2.5 times within this), while one product 3% off fails.
 */
export function weightTolerance(formats: readonly WeightFormat[], inner: number): Tolerance {
  if (!formats.some(isQuantFormat))
    return { atol: Math.max(REDUCTION.atol, 1e-5 * Math.sqrt(inner)), rtol: REDUCTION.rtol };
  return { atol: 0.05, rtol: 0.01 };
}
