import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { type HalfType, HalfWeight, unpackHalves } from '../half-weight';
import { gather } from '../indexing';
import { dequantize, QuantizedWeight, type QuantType, quantizedShape } from '../quantized-weight';
import { scope } from '../scope';
import { showShape, sizeOf } from '../shape';
import type { Tensor } from '../tensor';
import { ELEMENTWISE } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { isQuantFormat, type ProductWeight, weightCaseInputs } from './weight-product';

/** The formats whose rows `weightRowsOp` decodes: a compact weight's (an f32 table is a plain `gather`). */
export type CompactFormat = HalfType | QuantType;

/** The row length of a compact table given as data (codes or 16-bit words) and scales. */
function rowLength(
  data: { readonly shape: readonly number[] },
  scales: { readonly shape: readonly number[] },
  format: CompactFormat,
): number {
  return isQuantFormat(format) ? quantizedShape(format, scales.shape)[1] : 2 * data.shape[1];
}

/** A case: `ids` drawn from -1..rows (the two ends out of range, giving rows of zeros) into a random table [rows, dim]. */
function rowsCase(format: CompactFormat, ids: readonly number[], rows: number, dim: number) {
  const [data, scales] = weightCaseInputs(format, rows, dim);
  return {
    label: `${format} [${rows}, ${dim}] rows of ids [${ids.join(', ')}]`,
    inputs: [{ shape: ids, dist: { kind: 'ints', low: -1, high: rows } } as const, data, scales],
    params: [format] as [CompactFormat],
    // Each value is one or two f32 roundings of an exact product, in whatever order the kernel takes them.
    tol: ELEMENTWISE,
  };
}

/**
 * Rows of a compact weight table [rows, dim] picked by i32 `ids` of any shape, decoded to f32 [...ids.shape, dim]:
 * the embedding lookup of a quantized or 16-bit checkpoint, which then needs no f32 copy of its table. Out-of-range
 * ids give rows of zeros, as `gather`'s do. Kernel: `weightRows(ids, data, scales, format)` (see WeightInputs); the
 * composite gathers the rows' words and scales and decodes them with primitives. Not differentiable: the codes have
 * no gradient, and a table that trains is f32.
 */
export const weightRowsOp = fusedOp({
  name: 'weightRows',
  inputs: ['ids', 'data', 'scales'],
  outputShape: ([ids, data, scales], [format]) => [...ids.shape, rowLength(data, scales, format)],
  composite: (ids: Tensor, data: Tensor, scales: Tensor, format: CompactFormat) =>
    scope(() => {
      const flat = ids.reshape([-1]); // [n]
      const rows = isQuantFormat(format)
        ? dequantize(format, gather(scales, flat), gather(data, flat))
        : unpackHalves(format, gather(data, flat)); // [n, dim]
      return rows.reshape([...ids.shape, rows.shape[1]]); // [...ids, dim]
    }),
  gradient: 'none',
  cases: [
    rowsCase('q8_0', [3], 5, 64),
    rowsCase('q8_0', [2, 4], 9, 96),
    rowsCase('q4_0', [1], 7, 32),
    rowsCase('q4_0', [3, 2], 6, 128),
    rowsCase('q4_k', [1], 4, 256),
    rowsCase('q4_k', [5], 9, 512),
    rowsCase('q6_k', [1], 3, 256),
    rowsCase('q6_k', [2, 3], 5, 768),
    rowsCase('f16', [4], 6, 10),
    rowsCase('bf16', [2, 2], 5, 34),
  ],
});

/**
 * Rows of `table` [rows, dim] picked by i32 `ids` of any shape -> [...ids.shape, dim]: `gather` for an f32 table (with
 * its gradient), else the compact weight's rows decoded to f32 (see weightRowsOp). Out-of-range ids give zeros.
 */
export function weightRows(table: ProductWeight, ids: Tensor): Tensor {
  if (!(table instanceof QuantizedWeight || table instanceof HalfWeight)) return gather(table, ids);
  const [data, scales] =
    table instanceof QuantizedWeight ? [table.quants, table.scales] : [table.packed, table.packed];
  sameBackend('weightRows', ids, data, scales);
  assertDType('weightRows (ids)', ids.dtype, ['i32']);
  if (sizeOf(ids.shape) === 0) {
    throw new Error(`weightRows: ids ${showShape(ids.shape)} are empty; expected at least one id`);
  }
  return runFused(weightRowsOp, [ids, data, scales], [table.type]);
}
