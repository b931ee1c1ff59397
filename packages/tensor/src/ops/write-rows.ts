import { assertSameDType } from '../dtype';
import { sameBackend } from '../guards';
import { slice, writeSlice } from '../movement';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { runFusedInPlace } from './dispatch';
import { inPlaceOp } from './op';

/** A conformance case: the target's shape, the rows written and the size of the rest of each row. */
interface WriteRowsCase {
  readonly targetRows: number;
  readonly rest: readonly number[];
  readonly rows: readonly number[];
}

/**
 * In place: target[rows[i]] = src[i] for target [R, ...rest] and src [N, ...rest], rows N distinct row indices (one
 * scatter instead of N slices and writes: the new keys of sequences decoded together, each into its own slot and
 * position of a shared cache). Kernel: `writeRows(target, src, rows)`.
 */
export const writeRowsOp = inPlaceOp({
  name: 'writeRows',
  inputs: ['target', 'src'],
  composite: (target: Tensor, src: Tensor, rows: readonly number[]) => {
    scope(() => {
      const [, ...rest] = src.shape;
      const zeros = rest.map(() => 0);
      rows.forEach((row, i) => {
        writeSlice(target, slice(src, [i, ...zeros], [1, ...rest]), [row, ...zeros]);
      });
    });
  },
  gradient: 'none',
  cases: casesOver<WriteRowsCase, [readonly number[]]>(
    [
      { targetRows: 6, rest: [4], rows: [4, 0, 2] },
      { targetRows: 5, rest: [2, 3], rows: [3, 1] },
      { targetRows: 64, rest: [2, 16], rows: [63, 7, 0, 31, 8] },
      { targetRows: 3, rest: [5], rows: [] },
    ],
    ({ targetRows, rest, rows }) => ({
      label: `${shapeLabel([targetRows, ...rest])} rows ${rows.join(',') || 'none'}`,
      inputs: [{ shape: [targetRows, ...rest] }, { shape: [rows.length, ...rest] }],
      params: [rows],
      tol: ELEMENTWISE,
    }),
  ),
});

/**
 * Writes row i of src [N, ...rest] over row rows[i] of target [R, ...rest], in place, for N distinct rows in [0, R).
 * For a cache [slots, capacity, ...], pass `cache.view([slots * capacity, ...])` and rows slot · capacity + position.
 */
export function writeRows(target: Tensor, src: Tensor, rows: readonly number[]): void {
  sameBackend('writeRows', target, src);
  assertSameDType('writeRows', target.dtype, src.dtype);
  const [targetRows, ...rest] = target.shape;
  const same = src.rank === target.rank && src.shape.every((d, i) => i === 0 || d === target.shape[i]);
  if (target.rank < 1 || !same || src.shape[0] !== rows.length) {
    throw new Error(
      `writeRows: expected src [${rows.length}, ${rest.join(', ')}] (a row for each of the ${rows.length} rows given, shaped ` +
        `like target ${showShape(target.shape)}'s), got ${showShape(src.shape)}`,
    );
  }
  const seen = new Set<number>();
  rows.forEach((row, i) => {
    if (!Number.isInteger(row) || row < 0 || row >= targetRows || seen.has(row)) {
      throw new Error(
        `writeRows: rows[${i}] is ${row}; expected distinct integers in [0, ${targetRows}) (target's rows)`,
      );
    }
    seen.add(row);
  });
  runFusedInPlace(writeRowsOp, [target, src], [rows]);
}
