import { op, shuffle32, simd, simdLoad, v128Zero } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const I = ValType.i32;

/**
 * out[j] = Σ_r x[r · stride + j] for j < cols: each row is added four columns at a time into
 * float64 accumulators (two f64x2 per vector), which are rounded to f32 once at the end.
 * Parameters: byte addresses of x, of the output and of a float64 scratch of `cols` values; the
 * number of rows, the number of columns summed (a multiple of 4) and the row stride of x in
 * elements.
 */
export const COLUMN_SUM = kernel({
  name: 'column_sum_f32',
  params: i32('x', 'out', 'acc', 'rows', 'cols', 'stride'),
  emit(f, { x, out, acc, rows, cols, stride }) {
    const [row, j, colBytes, strideBytes] = f.locals(I, 4);
    const v = f.local(ValType.v128);
    f.set(colBytes, op('i32.shl', cols, 2));
    f.set(strideBytes, op('i32.shl', stride, 2));
    // acc holds 8 bytes per column: the f64 pair of columns j, j + 1 sits at acc + 2j.
    const low = op('i32.add', acc, op('i32.shl', j, 1));
    f.for(j, 0, colBytes, 16, () => {
      f.storeV128(low, v128Zero);
      f.storeV128(low, v128Zero, 16);
    });
    f.for(row, 0, rows, 1, () => {
      f.for(j, 0, colBytes, 16, () => {
        f.set(v, simdLoad('v128.load', op('i32.add', x, j)));
        f.storeV128(low, simd('f64x2.add', simdLoad('v128.load', low), simd('f64x2.promote_low_f32x4', v)));
        f.storeV128(
          low,
          simd(
            'f64x2.add',
            simdLoad('v128.load', low, 16),
            simd('f64x2.promote_low_f32x4', shuffle32(v, v, [2, 3, 0, 1])),
          ),
          16,
        );
      });
      f.set(x, op('i32.add', x, strideBytes));
    });
    f.for(j, 0, colBytes, 16, () => {
      const pairLow = simd('f32x4.demote_f64x2_zero', simdLoad('v128.load', low));
      const pairHigh = simd('f32x4.demote_f64x2_zero', simdLoad('v128.load', low, 16));
      f.storeV128(op('i32.add', out, j), shuffle32(pairLow, pairHigh, [0, 1, 4, 5]));
    });
  },
});

export const COLUMN_SUM_KERNEL = COLUMN_SUM.name;
