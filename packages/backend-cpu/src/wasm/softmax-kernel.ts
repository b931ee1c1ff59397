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

/**
 * Softmax over each row: the row maximum, e^(x - max) four lanes at a time (the vector exp of
 * `vector-exp`; the last cols % 4 elements through the same code on a splat), summed in float64,
 * then scaled by 1 / sum. A -Infinity score gets exactly 0; a NaN makes its row NaN. Parameters:
 * byte addresses of x and of the output, the number of rows, the row length.
 */
export const SOFTMAX = kernel({
  name: 'softmax_f32',
  params: i32('x', 'out', 'rows', 'cols'),
  emit(f, { x, out, rows, cols }) {
    const [row, j] = f.locals(I, 2);
    const [m, z, k, e, total, scale] = f.locals(V, 6);
    const [rowMax, inverse] = f.locals(ValType.f32, 2);
    const sum = f.local(ValType.f64);
    const { rowBytes, vectors, tail } = rowLoops(f, cols, j);
    const xAt = op('i32.add', x, j);
    const outAt = op('i32.add', out, j);
    f.for(row, 0, rows, 1, () => {
      f.set(m, f32x4(Number.NEGATIVE_INFINITY));
      // Pseudo-max (one instruction) skips a NaN lane here; the NaN still makes the sum, so the row, NaN.
      vectors(() => f.set(m, simd('f32x4.pmax', m, simdLoad('v128.load', xAt))));
      f.set(rowMax, laneMax(m));
      tail(() => f.set(rowMax, op('f32.max', rowMax, load('f32.load', xAt))));
      f.set(m, simd('f32x4.splat', rowMax));
      f.set(total, v128Zero);
      vectors(() => {
        f.set(z, sub(simdLoad('v128.load', xAt), m));
        emitExp(f, z, k, e);
        f.storeV128(outAt, e);
        addWidened(f, total, total, e);
      });
      f.set(sum, widenedTotal(total));
      tail(() => {
        f.set(z, simd('f32x4.splat', op('f32.sub', load('f32.load', xAt), rowMax)));
        emitExp(f, z, k, e);
        f.store('f32.store', outAt, lane('f32x4.extract_lane', e, 0));
        f.set(sum, op('f64.add', sum, op('f64.promote_f32', lane('f32x4.extract_lane', e, 0))));
      });
      f.set(inverse, op('f32.demote_f64', op('f64.div', f64(1), sum)));
      f.set(scale, simd('f32x4.splat', inverse));
      vectors(() => f.storeV128(outAt, mul(simdLoad('v128.load', outAt), scale)));
      tail(() => f.store('f32.store', outAt, op('f32.mul', load('f32.load', outAt), inverse)));
      f.set(x, op('i32.add', x, rowBytes));
      f.set(out, op('i32.add', out, rowBytes));
    });
  },
});

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
