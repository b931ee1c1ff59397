import { f32x4, f64, type Local, lane, laneMax, load, op, simd, simdLoad, v128Zero } from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { emitExp, mul, sub } from './vector-exp';
import { addWidened, widenedTotal } from './widen';

const I = ValType.i32;
const V = ValType.v128;

/**
 * The loops over one row of `cols` f32 values, counting bytes with `j`: `vectors` over its whole 4-lane pieces,
 * `tail` over the last cols % 4 values; `rowBytes` is the row's length in bytes.
 */
function rowLoops(f: FunctionBuilder, cols: Local, j: Local) {
  const [vectorBytes, rowBytes] = f.locals(I, 2);
  f.set(vectorBytes, op('i32.shl', op('i32.and', cols, -4), 2));
  f.set(rowBytes, op('i32.shl', cols, 2));
  return {
    rowBytes,
    vectors: (body: () => void) => f.for(j, 0, vectorBytes, 16, body),
    tail: (body: () => void) => f.for(j, vectorBytes, rowBytes, 4, body),
  };
}

/** The locals of `rowExpSum`. */
interface ExpSumLocals {
  readonly j: Local;
  readonly m: Local;
  readonly z: Local;
  readonly k: Local;
  readonly e: Local;
  readonly total: Local;
  /** The row's maximum (f32) and Σ e^(x - max) (f64), the results. */
  readonly rowMax: Local;
  readonly sum: Local;
}

function expSumLocals(f: FunctionBuilder): ExpSumLocals {
  const j = f.local(I);
  const [m, z, k, e, total] = f.locals(V, 5);
  return { j, m, z, k, e, total, rowMax: f.local(ValType.f32), sum: f.local(ValType.f64) };
}

/**
 * The row at `x`: its maximum into `rowMax`, then e^(x - max) four lanes at a time (the vector exp of `vector-exp`;
 * the last cols % 4 elements through the same code on a splat), summed in float64 into `sum` and, with `out`,
 * stored there. A -Infinity score gets exactly 0; a NaN makes the sum NaN.
 */
function rowExpSum(
  f: FunctionBuilder,
  l: ExpSumLocals,
  loops: ReturnType<typeof rowLoops>,
  x: Local,
  out?: Local,
): void {
  const { m, z, k, e, total, rowMax, sum } = l;
  const { vectors, tail } = loops;
  const xAt = op('i32.add', x, l.j);
  const outAt = out === undefined ? undefined : op('i32.add', out, l.j);
  f.set(m, f32x4(Number.NEGATIVE_INFINITY));
  // Pseudo-max (one instruction) skips a NaN lane here; the NaN still makes the sum NaN.
  vectors(() => f.set(m, simd('f32x4.pmax', m, simdLoad('v128.load', xAt))));
  f.set(rowMax, laneMax(m));
  tail(() => f.set(rowMax, op('f32.max', rowMax, load('f32.load', xAt))));
  f.set(m, simd('f32x4.splat', rowMax));
  f.set(total, v128Zero);
  vectors(() => {
    f.set(z, sub(simdLoad('v128.load', xAt), m));
    emitExp(f, z, k, e);
    if (outAt) f.storeV128(outAt, e);
    addWidened(f, total, total, e);
  });
  f.set(sum, widenedTotal(total));
  tail(() => {
    f.set(z, simd('f32x4.splat', op('f32.sub', load('f32.load', xAt), rowMax)));
    emitExp(f, z, k, e);
    if (outAt) f.store('f32.store', outAt, lane('f32x4.extract_lane', e, 0));
    f.set(sum, op('f64.add', sum, op('f64.promote_f32', lane('f32x4.extract_lane', e, 0))));
  });
}

/**
 * Softmax over each row: the row's e^(x - max) and their sum (`rowExpSum`), then scaled by 1 / sum. A -Infinity
 * score gets exactly 0; a NaN makes its row NaN. Parameters: byte addresses of x and of the output, the number of
 * rows, the row length.
 */
export const SOFTMAX = kernel({
  name: 'softmax_f32',
  params: i32('x', 'out', 'rows', 'cols'),
  emit(f, { x, out, rows, cols }) {
    const row = f.local(I);
    const l = expSumLocals(f);
    const scale = f.local(V);
    const inverse = f.local(ValType.f32);
    const loops = rowLoops(f, cols, l.j);
    const { rowBytes, vectors, tail } = loops;
    const outAt = op('i32.add', out, l.j);
    f.for(row, 0, rows, 1, () => {
      rowExpSum(f, l, loops, x, out);
      f.set(inverse, op('f32.demote_f64', op('f64.div', f64(1), l.sum)));
      f.set(scale, simd('f32x4.splat', inverse));
      vectors(() => f.storeV128(outAt, mul(simdLoad('v128.load', outAt), scale)));
      tail(() => f.store('f32.store', outAt, op('f32.mul', load('f32.load', outAt), inverse)));
      f.set(x, op('i32.add', x, rowBytes));
      f.set(out, op('i32.add', out, rowBytes));
    });
  },
});

/**
 * Each row's log-sum-exp in two parts, out[2r] = max_r and out[2r + 1] = Σ e^(x - max_r) (f32, at least 1 unless
 * the row holds a NaN or only -Infinity): log Σ e^x = max + log(out[2r + 1]), the cross-entropy's normaliser,
 * without an f32 log in WebAssembly. Parameters: byte addresses of x and of the output, the number of rows, the
 * row length.
 */
export const ROW_EXP_SUM = kernel({
  name: 'row_exp_sum_f32',
  params: i32('x', 'out', 'rows', 'cols'),
  emit(f, { x, out, rows, cols }) {
    const row = f.local(I);
    const l = expSumLocals(f);
    const loops = rowLoops(f, cols, l.j);
    f.for(row, 0, rows, 1, () => {
      rowExpSum(f, l, loops, x);
      f.store('f32.store', out, l.rowMax);
      f.store('f32.store', out, op('f32.demote_f64', l.sum), 4);
      f.set(x, op('i32.add', x, loops.rowBytes));
      f.set(out, op('i32.add', out, 8));
    });
  },
});

export const ROW_EXP_SUM_KERNEL = ROW_EXP_SUM.name;
export const SOFTMAX_KERNEL = SOFTMAX.name;

/**
 * Softmax's backward over each row: out = y (g - Σ g y), the dot product summed in float64 like the softmax's sum
 * (four lanes at a time, the last cols % 4 elements one by one), then the row written in one more pass over y and
 * g (still in the caches). Parameters: byte addresses of y, g and the output, the number of rows, the row length.
 */
export const SOFTMAX_GRAD = kernel({
  name: 'softmax_grad_f32',
  params: i32('y', 'g', 'out', 'rows', 'cols'),
  emit(f, { y, g, out, rows, cols }) {
    const [row, j] = f.locals(I, 2);
    const [product, total, dotVector] = f.locals(V, 3);
    const dotScalar = f.local(ValType.f32);
    const sum = f.local(ValType.f64);
    const { rowBytes, vectors, tail } = rowLoops(f, cols, j);
    const at = (base: Local) => op('i32.add', base, j);
    f.for(row, 0, rows, 1, () => {
      f.set(total, v128Zero);
      vectors(() => {
        f.set(product, mul(simdLoad('v128.load', at(g)), simdLoad('v128.load', at(y))));
        addWidened(f, total, total, product);
      });
      f.set(sum, widenedTotal(total));
      tail(() =>
        f.set(
          sum,
          op(
            'f64.add',
            sum,
            op('f64.promote_f32', op('f32.mul', load('f32.load', at(g)), load('f32.load', at(y)))),
          ),
        ),
      );
      f.set(dotScalar, op('f32.demote_f64', sum));
      f.set(dotVector, simd('f32x4.splat', dotScalar));
      vectors(() =>
        f.storeV128(at(out), mul(simdLoad('v128.load', at(y)), sub(simdLoad('v128.load', at(g)), dotVector))),
      );
      tail(() =>
        f.store(
          'f32.store',
          at(out),
          op('f32.mul', load('f32.load', at(y)), op('f32.sub', load('f32.load', at(g)), dotScalar)),
        ),
      );
      f.set(y, op('i32.add', y, rowBytes));
      f.set(g, op('i32.add', g, rowBytes));
      f.set(out, op('i32.add', out, rowBytes));
    });
  },
});

export const SOFTMAX_GRAD_KERNEL = SOFTMAX_GRAD.name;
