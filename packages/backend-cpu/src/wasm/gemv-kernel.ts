import {
  f32,
  type KernelFeatures,
  laneSum,
  load,
  mulAdd,
  type Operand,
  op,
  scalar,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, sub, mul, bytes, fadd, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const vadd = (a: Operand, b: Operand) => simd('f32x4.add', a, b);

/** Rows of W folded into the output per pass of `gemv_n`. */
const GEMV_N_ROWS = 4;
/**
 * Vector accumulators of each of `gemv_t`'s dot products: 2, so the 6 streams' 12 stay in x64's 16 vector
 * registers (4, 24 of them, spilled). One thread, medians of 6 alternations on a 2-core Zen 5: Node 20
 * [1,768] x [2048,768]ᵀ 27.9 -> 30.6 GB/s, [1,768] x [32000,768]ᵀ 32.2 -> 33.6; Node 26 the same within the
 * noise (30.0 / 29.4, 33.2 / 33.9). Where the compiler loads all of a loop step's vectors first (`wideTiles` false,
 * V8 before 13.6), 12 loads beside 12 accumulators spill, so 1: the stories110M shape's decode on a Zen 4, Node 20,
 * 21.1-22.1 -> 19.8-19.9 ms a token on one thread (Node 26 the same either way, 18.4-19.3 against 18.8-19.2).
 */
function gemvLanes(features: KernelFeatures): number {
  return features.wideTiles ? 2 : 1;
}
/**
 * Rows of W `gemv_t` reads at once, each from its own part of W: a core streams memory faster with several distant
 * sequential reads in flight than with one (the prefetcher follows each within its 4 KiB page). Weights of the
 * stories110M shape, one thread, Node 20: 9.5 GB/s with one row at a time, 11.2 with 2, 12.5 with 3, 13.4-13.9 with 6
 * (12.9-13.4 with 8, whose 32 accumulators spill); two threads 16 -> 21.7 GB/s.
 */
const GEMV_T_STREAMS = 6;

/**
 * `gemv_t`: out[j] = sum_q x[q] W[j, q] for j < n, W row-major [n, k] (a weight stored
 * [out, in]). W's rows split into GEMV_T_STREAMS equal parts (the last n mod GEMV_T_STREAMS rows
 * after them, one at a time): row j of every part at once, each with `gemvLanes` vector
 * accumulators, so every part is read as a sequential stream of its own. Each row's sum is taken
 * in the same order whatever the parts. Parameters: pointers and steps in bytes, sizes in elements.
 */
export const GEMV_T = kernel({
  name: 'gemv_t',
  params: i32('batch', 'xStep', 'wStep', 'oStep', 'n', 'k', 'x', 'w', 'out'),
  emit(f, { batch, xStep, wStep, oStep, n, k, x, w, out }, { features }) {
    const lanes = gemvLanes(features);
    const [entry, j, q, kVec, kBlock, part, xq] = f.locals(I, 7);
    const row = f.locals(I, GEMV_T_STREAMS);
    const o = f.locals(I, GEMV_T_STREAMS);
    const acc = Array.from({ length: GEMV_T_STREAMS }, () => f.locals(V, lanes));
    const xv = f.local(V);
    const sum = f.local(F);
    f.set(kBlock, op('i32.and', k, -4 * lanes));
    f.set(kVec, op('i32.and', k, -4));
    /** The dot products of x with the rows at row[0..count), written at o[0..count); the pointers end one row on. */
    const dots = (count: number) => {
      const step = (width: number) => {
        for (let u = 0; u < width; u++) {
          f.set(xv, simdLoad('v128.load', xq, 16 * u));
          for (let s = 0; s < count; s++)
            f.set(acc[s][u], mulAdd(features, xv, simdLoad('v128.load', row[s], 16 * u), acc[s][u]));
        }
        f.set(xq, add(xq, 16 * width));
        for (let s = 0; s < count; s++) f.set(row[s], add(row[s], 16 * width));
      };
      for (let s = 0; s < count; s++) for (const a of acc[s]) f.set(a, v128Zero);
      f.set(xq, x);
      f.for(q, 0, kBlock, 4 * lanes, () => step(lanes));
      f.for(q, kBlock, kVec, 4, () => step(1));
      for (let s = 0; s < count; s++) {
        for (let u = 1; u < lanes; u++) f.set(acc[s][0], vadd(acc[s][0], acc[s][u]));
        f.set(sum, laneSum(acc[s][0]));
        f.set(xq, add(x, bytes(kVec)));
        f.for(q, kVec, k, 1, () => {
          f.set(sum, fadd(sum, fmul(load('f32.load', xq), load('f32.load', row[s]))));
          f.set(xq, add(xq, 4));
          f.set(row[s], add(row[s], 4));
        });
        f.store('f32.store', o[s], sum);
        f.set(o[s], add(o[s], 4));
      }
    };
    f.set(part, op('i32.div_u', n, GEMV_T_STREAMS));
    f.for(entry, 0, batch, 1, () => {
      for (let s = 0; s < GEMV_T_STREAMS; s++) {
        f.set(row[s], add(w, mul(mul(s, part), bytes(k))));
        f.set(o[s], add(out, bytes(mul(s, part))));
      }
      f.for(j, 0, part, 1, () => dots(GEMV_T_STREAMS));
      f.set(row[0], row[GEMV_T_STREAMS - 1]);
      f.set(o[0], o[GEMV_T_STREAMS - 1]);
      f.for(j, mul(part, GEMV_T_STREAMS), n, 1, () => dots(1));
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
