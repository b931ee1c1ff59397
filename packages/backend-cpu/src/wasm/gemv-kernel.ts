import { f32, laneSum, load, mulAdd, type Operand, op, scalar, simd, simdLoad, v128Zero } from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, sub, mul, bytes, fadd, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const vadd = (a: Operand, b: Operand) => simd('f32x4.add', a, b);

/** Rows of W folded into the output per pass of `gemv_n`. */
const GEMV_N_ROWS = 4;
/** Vector accumulators of the dot products of `gemv_t`. */
const GEMV_T_LANES = 4;

/**
 * `gemv_t`: out[j] = sum_q x[q] W[j, q] for j < n, W row-major [n, k] (a weight stored
 * [out, in]). One row at a time with GEMV_T_LANES vector accumulators, so W is read as a single
 * sequential stream (what the hardware prefetcher serves best). Parameters: pointers and steps
 * in bytes, sizes in elements.
 */
export const GEMV_T = kernel({
  name: 'gemv_t',
  params: i32('batch', 'xStep', 'wStep', 'oStep', 'n', 'k', 'x', 'w', 'out'),
  emit(f, { batch, xStep, wStep, oStep, n, k, x, w, out }, { features }) {
    const lanes = GEMV_T_LANES;
    const [entry, j, q, kVec, kBlock, row, xq, o] = f.locals(I, 8);
    const acc = f.locals(V, lanes);
    const sum = f.local(F);
    f.set(kBlock, op('i32.and', k, -4 * lanes));
    f.set(kVec, op('i32.and', k, -4));
    const step = (width: number) => {
      for (let u = 0; u < width; u++) {
        f.set(
          acc[u],
          mulAdd(features, simdLoad('v128.load', xq, 16 * u), simdLoad('v128.load', row, 16 * u), acc[u]),
        );
      }
      f.set(xq, add(xq, 16 * width));
      f.set(row, add(row, 16 * width));
    };
    f.for(entry, 0, batch, 1, () => {
      f.set(row, w);
      f.set(o, out);
      f.for(j, 0, n, 1, () => {
        for (const a of acc) f.set(a, v128Zero);
        f.set(xq, x);
        f.for(q, 0, kBlock, 4 * lanes, () => step(lanes));
        f.for(q, kBlock, kVec, 4, () => step(1));
        for (let u = 1; u < lanes; u++) f.set(acc[0], vadd(acc[0], acc[u]));
        const v = acc[0];
        f.set(sum, laneSum(v));
        f.for(q, kVec, k, 1, () => {
          f.set(sum, fadd(sum, fmul(load('f32.load', xq), load('f32.load', row))));
          f.set(xq, add(xq, 4));
          f.set(row, add(row, 4));
        });
        f.store('f32.store', o, sum);
        f.set(o, add(o, 4));
      });
      f.set(x, add(x, xStep));
      f.set(w, add(w, wStep));
      f.set(out, add(out, oStep));
    });
  },
});

/**
 * `gemv_n`: out[j] = sum_q x[q] W[q, j] for j < n, W rows ldw elements apart; GEMV_N_ROWS rows
 * of W are folded into the output per pass, so out is read and written k / rows times.
 * Parameters: pointers and steps in bytes, sizes and `ldw`, W's row stride, in elements.
 */
export const GEMV_N = kernel({
  name: 'gemv_n',
  params: i32('batch', 'xStep', 'wStep', 'oStep', 'n', 'k', 'ldw', 'x', 'w', 'out'),
  emit(f, { batch, xStep, wStep, oStep, n, k, ldw, x, w, out }, { features }) {
    const rows = GEMV_N_ROWS;
    const [entry, j, q, nVec, ldwBytes, o, end] = f.locals(I, 7);
    const ptr = f.locals(I, rows);
    const xs = f.locals(V, rows);
    const xf = f.locals(F, rows);
    f.set(ldwBytes, bytes(ldw));
    f.set(nVec, op('i32.and', n, -4));

    const foldRows = (count: number) => {
      for (let i = 0; i < count; i++) {
        f.set(ptr[i], add(w, mul(add(q, i), ldwBytes)));
        f.set(xf[i], load('f32.load', add(x, bytes(q)), 4 * i));
        f.set(xs[i], simd('f32x4.splat', xf[i]));
      }
      f.set(o, out);
      f.set(end, add(out, bytes(nVec)));
      f.block((done) => {
        f.brIf(done, op('i32.ge_u', o, end));
        f.loop((again) => {
          let sum: Operand = simdLoad('v128.load', o);
          for (let i = 0; i < count; i++) sum = mulAdd(features, xs[i], simdLoad('v128.load', ptr[i]), sum);
          f.storeV128(o, sum);
          for (let i = 0; i < count; i++) f.set(ptr[i], add(ptr[i], 16));
          f.set(o, add(o, 16));
          f.brIf(again, op('i32.lt_u', o, end));
        });
      });
      f.for(j, nVec, n, 1, () => {
        let sum: Operand = load('f32.load', o);
        for (let i = 0; i < count; i++) sum = fadd(sum, fmul(xf[i], load('f32.load', ptr[i])));
        f.store('f32.store', o, sum);
        for (let i = 0; i < count; i++) f.set(ptr[i], add(ptr[i], 4));
        f.set(o, add(o, 4));
      });
    };

    f.for(entry, 0, batch, 1, () => {
      f.for(j, 0, n, 1, () => f.store('f32.store', add(out, bytes(j)), f32(0)));
      f.for(q, 0, sub(k, rows - 1), rows, () => foldRows(rows));
      f.for(q, mul(op('i32.div_u', k, rows), rows), k, 1, () => foldRows(1));
      f.set(x, add(x, xStep));
      f.set(w, add(w, wStep));
      f.set(out, add(out, oStep));
    });
  },
});
