import { op, shuffle32, simd, simdLoad, v128Zero } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { addWidened, pairwise } from './widen';

const I = ValType.i32;
/** Rows added to the accumulators per pass over the columns: the accumulators are loaded and stored once a block. */
const ROW_BLOCK = 8;

/**
 * out[j] = Σ_r x[r · stride + j] for j < cols: ROW_BLOCK rows at a time, four columns at a time, the block's rows
 * summed pairwise in f32 and the block sums added in order into float64 accumulators (two f64x2 per vector), which
 * are rounded to f32 once at the end. The accumulators live in `acc` between blocks ([12,64,512] summed over 768
 * rows, 2 threads, Node 26: 160 -> 122 us from the caches, 215-227 -> 123-147 us from memory, against one row a
 * pass). Against widening each row (`pairwise`), [768,128] 21-22 -> 12-13 us from the caches, [768,512] 56-80 ->
 * 40-43 (Node 20, one and two threads).
 * Parameters: byte addresses of x, of the output and of a float64 scratch of `cols` values; the
 * number of rows, the number of columns summed (a multiple of 4) and the row stride of x in
 * elements.
 */
export const COLUMN_SUM = kernel({
  name: 'column_sum_f32',
  params: i32('x', 'out', 'acc', 'rows', 'cols', 'stride'),
  emit(f, { x, out, acc, rows, cols, stride }) {
    const [row, j, colBytes, strideBytes] = f.locals(I, 4);
    const [v, lowSum, highSum] = f.locals(ValType.v128, 3);
    const rowAt = f.locals(I, ROW_BLOCK);
    f.set(colBytes, op('i32.shl', cols, 2));
    f.set(strideBytes, op('i32.shl', stride, 2));
    // acc holds 8 bytes per column: the f64 pair of columns j, j + 1 sits at acc + 2j.
    const low = op('i32.add', acc, op('i32.shl', j, 1));
    f.for(j, 0, colBytes, 16, () => {
      f.storeV128(low, v128Zero);
      f.storeV128(low, v128Zero, 16);
    });
    /** Adds rows [row, row + count) of x (at rowAt[0..count)) to the accumulators, each column's rows in order. */
    const addRows = (count: number) => {
      f.for(j, 0, colBytes, 16, () => {
        f.set(lowSum, simdLoad('v128.load', low));
        f.set(highSum, simdLoad('v128.load', low, 16));
        f.set(
          v,
          pairwise(count, (r) => simdLoad('v128.load', op('i32.add', rowAt[r], j))),
        );
        addWidened(f, lowSum, highSum, v);
        f.storeV128(low, lowSum);
        f.storeV128(low, highSum, 16);
      });
    };
    f.for(row, 0, op('i32.sub', rows, ROW_BLOCK - 1), ROW_BLOCK, () => {
      for (let r = 0; r < ROW_BLOCK; r++) f.set(rowAt[r], op('i32.add', x, op('i32.mul', strideBytes, r)));
      addRows(ROW_BLOCK);
      f.set(x, op('i32.add', x, op('i32.mul', strideBytes, ROW_BLOCK)));
    });
    f.set(rowAt[0], x);
    f.for(row, row, rows, 1, () => {
      addRows(1);
      f.set(rowAt[0], op('i32.add', rowAt[0], strideBytes));
    });
    f.for(j, 0, colBytes, 16, () => {
      const pairLow = simd('f32x4.demote_f64x2_zero', simdLoad('v128.load', low));
      const pairHigh = simd('f32x4.demote_f64x2_zero', simdLoad('v128.load', low, 16));
      f.storeV128(op('i32.add', out, j), shuffle32(pairLow, pairHigh, [0, 1, 4, 5]));
    });
  },
});

export const COLUMN_SUM_KERNEL = COLUMN_SUM.name;
