import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import { writeSlice } from '../movement';
import { scope } from '../scope';
import { showShape, sizeOf } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { runFusedInPlace } from './dispatch';
import { inPlaceOp } from './op';

/**
 * In place: totals[index] = Σ x² over every element of x. A global norm over many tensors (gradient clipping) writes
 * each one's sum of squares into its own slot of one vector, with no copy of each partial sum into a concatenation.
 * Kernel: `sumSquaresInto(totals, x, index)`.
 */
export const sumSquaresIntoOp = inPlaceOp({
  name: 'sumSquaresInto',
  inputs: ['totals', 'x'],
  composite: (totals: Tensor, x: Tensor, index: number) => {
    scope(() => {
      const flat = x.reshape([1, sizeOf(x.shape)]); // [1, n]
      writeSlice(totals, matmul(flat, flat, { transB: true }).reshape([1]), [index]); // g·g as one dot product
    });
  },
  gradient: 'none',
  cases: casesOver(
    [
      { totals: 3, shape: [7], index: 1 },
      { totals: 2, shape: [128, 96], index: 0 },
      { totals: 3, shape: [40, 50], index: 2 },
      { totals: 4, shape: [300, 301], index: 3 },
      { totals: 1, shape: [1], index: 0 },
    ],
    ({ totals, shape, index }) => ({
      label: `${shapeLabel(shape)} into slot ${index} of ${totals}`,
      inputs: [{ shape: [totals] }, { shape }],
      params: [index],
      tol: REDUCTION,
    }),
  ),
});

/** Writes Σ x² (over all of x) into totals[index], in place; totals is a vector [N] and index in [0, N). */
export function sumSquaresInto(totals: Tensor, x: Tensor, index: number): void {
  sameBackend('sumSquaresInto', totals, x);
  for (const t of [totals, x]) assertDType('sumSquaresInto', t.dtype, ['f32']);
  if (totals.rank !== 1) {
    throw new Error(
      `sumSquaresInto: expected totals [N] (one slot a tensor), got ${showShape(totals.shape)}`,
    );
  }
  if (!Number.isInteger(index) || index < 0 || index >= totals.shape[0]) {
    throw new Error(
      `sumSquaresInto: index must be an integer in [0, ${totals.shape[0]}) (a slot of totals), got ${index}`,
    );
  }
  runFusedInPlace(sumSquaresIntoOp, [totals, x], [index]);
}
