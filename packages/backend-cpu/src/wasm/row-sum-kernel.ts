import { load, op, simd, simdLoad, v128Zero } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { forEachRowToOne } from './row-reduction';
import { addWidened, widenedTotal } from './widen';

const I = ValType.i32;
const V = ValType.v128;

/**
 * out[r] = Σ_s x[r · size + s] for r < rows: each row is added four values at a time into two
 * f64x2 accumulators, the last size % 4 values into a scalar float64, and the sum rounded to
 * f32 once at the end. Parameters: byte addresses of x and of the output, the number of rows
 * and the row length in elements.
 */
export const ROW_SUM = kernel({
  name: 'row_sum_f32',
  params: i32('x', 'out', 'rows', 'size'),
  emit(f, params) {
    const { x, out } = params;
    const at = f.local(I);
    const [v, low, high] = f.locals(V, 3);
    const tail = f.local(ValType.f64);
    forEachRowToOne(f, params, ({ row, vectors }) => {
      f.set(low, v128Zero);
      f.set(high, v128Zero);
      f.for(at, 0, vectors, 16, () => {
        f.set(v, simdLoad('v128.load', op('i32.add', x, at)));
        addWidened(f, low, high, v);
      });
      f.set(low, simd('f64x2.add', low, high));
      f.set(tail, widenedTotal(low));
      f.for(at, vectors, row, 4, () => {
        f.set(tail, op('f64.add', tail, op('f64.promote_f32', load('f32.load', op('i32.add', x, at)))));
      });
      f.store('f32.store', out, op('f32.demote_f64', tail));
    });
  },
});

export const ROW_SUM_KERNEL = ROW_SUM.name;
