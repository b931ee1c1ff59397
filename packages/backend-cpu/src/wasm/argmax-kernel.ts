import { f32 as f32Const, f32x4, lane, load, op, simd, simdLoad } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { forEachRowToOne } from './row-reduction';

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/**
 * out[r] = the index of the first maximum of row r of x [rows, size] (i32), as `argmaxKernel` in JavaScript gives
 * it: each of the four lanes keeps the first of its values that is greater than all before it (NaN never is; the
 * lanes start at -Infinity, index 0), the lanes' best then taken by value and, among equal values, by the lowest
 * index, then the size % 4 values at the end one by one; a row whose first value is NaN gives 0. Parameters: byte
 * addresses of x and of out, the number of rows and the row length in elements (≥ 1).
 */
export const ARGMAX = kernel({
  name: 'argmax_f32',
  params: i32('x', 'out', 'rows', 'size'),
  emit(f, params) {
    const { x, out } = params;
    const [at, best, index, l] = f.locals(I, 4);
    const [v, bestValues, bestStarts, greater, starts, four] = f.locals(V, 6);
    const [value, bestValue] = f.locals(F, 2);
    f.set(four, simd('i32x4.splat', 4));
    forEachRowToOne(f, params, ({ row, vectors }) => {
      f.set(bestValues, f32x4(Number.NEGATIVE_INFINITY));
      f.set(bestStarts, simd('i32x4.splat', 0));
      f.set(starts, simd('i32x4.splat', 0));
      // Lane l of a vector holds element `starts` + l; the lanes keep the start of their best's vector.
      f.for(at, 0, vectors, 16, () => {
        f.set(v, simdLoad('v128.load', op('i32.add', x, at)));
        f.set(greater, simd('f32x4.gt', v, bestValues));
        f.set(bestValues, simd('v128.bitselect', v, bestValues, greater));
        f.set(bestStarts, simd('v128.bitselect', starts, bestStarts, greater));
        f.set(starts, simd('i32x4.add', starts, four));
      });
      f.set(best, 0);
      f.set(bestValue, f32Const(Number.NEGATIVE_INFINITY));
      for (let lanes = 0; lanes < 4; lanes++) {
        f.set(value, lane('f32x4.extract_lane', bestValues, lanes));
        f.set(index, op('i32.add', lane('i32x4.extract_lane', bestStarts, lanes), lanes));
        // A greater value, or an equal one at a lower index (lanes of one vector start alike).
        f.if(
          op(
            'i32.or',
            op('f32.gt', value, bestValue),
            op('i32.and', op('f32.eq', value, bestValue), op('i32.lt_s', index, best)),
          ),
          () => {
            f.set(bestValue, value);
            f.set(best, index);
          },
        );
      }
      f.set(l, op('i32.shr_u', vectors, 2));
      f.for(at, vectors, row, 4, () => {
        f.set(value, load('f32.load', op('i32.add', x, at)));
        f.if(op('f32.gt', value, bestValue), () => {
          f.set(bestValue, value);
          f.set(best, l);
        });
        f.set(l, op('i32.add', l, 1));
      });
      // The JavaScript kernel starts from the first value: NaN there is never beaten.
      f.set(value, load('f32.load', x));
      f.if(op('f32.ne', value, value), () => f.set(best, 0));
      f.store('i32.store', out, best);
    });
  },
});
