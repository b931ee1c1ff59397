import {
  type Local,
  lane,
  load,
  mulAdd,
  type Operand,
  op,
  scalar,
  shuffle32,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, sub, mul, bytes, fadd, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
/** Rows of A per register tile, each with 4 vector accumulators (3 or 4 rows spill on x64's 16 registers). */
const GEMM_FEW_T_ROWS = 2;
/** How far ahead of its block the first row tile touches W, in rows: two blocks (measured 3-5% ahead of one). */
const TOUCH_AHEAD_ROWS = 8;
const vadd = (a: Operand, b: Operand) => simd('f32x4.add', a, b);
const splat = (address: Operand) => simdLoad('v128.load32_splat', address);

/**
 * Calls `tile(rows)` for the rows [from, m) of the output in tiles of `rows` rows, counting rows
 * with `i`: full tiles, then one smaller tile for what is left (each size's code emitted once).
 */
function forRowTiles(
  f: FunctionBuilder,
  i: Local,
  from: Operand,
  m: Local,
  rows: number,
  tile: (rows: number) => void,
): void {
  f.for(i, from, sub(m, rows - 1), rows, () => tile(rows));
  for (let r = rows - 1; r >= 1; r--) {
    f.if(op('i32.eq', sub(m, i), r), () => tile(r));
  }
}

/** Lanes [x0 + x2, y0 + y2, x1 + x3, y1 + y3]: half of the lane sums of x and y. */
function pairSums(x: Operand, y: Operand): Operand {
  return vadd(shuffle32(x, y, [0, 4, 1, 5]), shuffle32(x, y, [2, 6, 3, 7]));
}

/** [sum of x's lanes, of y's, of z's, of u's] from pairSums(x, y) and pairSums(z, u). */
function laneSums4(xy: Operand, zu: Operand): Operand {
  return vadd(shuffle32(xy, zu, [0, 1, 4, 5]), shuffle32(xy, zu, [2, 3, 6, 7]));
}

/** The sum of v's lanes, as (l0 + l2) + (l1 + l3) like `pairSums` and `laneSums4`. */
function laneSum(v: Local): Operand {
  return fadd(
    fadd(lane('f32x4.extract_lane', v, 0), lane('f32x4.extract_lane', v, 2)),
    fadd(lane('f32x4.extract_lane', v, 1), lane('f32x4.extract_lane', v, 3)),
  );
}

/**
 * `gemm_few_t`: out[i, j] = sum_q A[i, q] W[j, q] for i < m, j < n, with A row-major [m, k], W
 * row-major [n, k] (a weight stored [out, in]) and out rows ldo apart. Built for few rows (m up
 * to about 16): W is read once, 4 rows at a time, and each such block stays in L1 while the dot
 * products of all rows of A with it accumulate in GEMM_FEW_T_ROWS x 4 vector registers. The first
 * row tile of a block also touches one cache line a step of the block TOUCH_AHEAD_ROWS rows further
 * on, so W streams in from L3 or memory while the block computes instead of stalling the tile that
 * reads it first ([8,288] x [32000,288]^T on one thread: 21 -> 26 GFLOP/s; 8 streams of batched
 * decode on 2 threads, 15M shape: 9.3 -> 8.1 ms a step). The last blocks touch their own rows, never past W.
 * Parameters: pointers and steps in bytes, sizes and `ldo`, the output's row stride, in elements.
 */
export const GEMM_FEW_T = kernel({
  name: 'gemm_few_t',
  params: i32('batch', 'aStep', 'wStep', 'oStep', 'm', 'n', 'k', 'ldo', 'a', 'w', 'out'),
  emit(f, { batch, aStep, wStep, oStep, m, n, k, ldo, a, w, out }, { features }) {
    const rows = GEMM_FEW_T_ROWS;
    const [entry, i, j, q, kVec, nVec, rowBytes, ldoBytes, wRow, aRow, o] = f.locals(I, 11);
    const ap = f.locals(I, rows);
    const wp = f.locals(I, 4);
    const acc = Array.from({ length: rows }, () => f.locals(V, 4));
    const wv = f.locals(V, 4);
    const av = f.local(V);
    const touched = f.local(V);
    const ahead = f.local(I);
    const sums = f.locals(V, rows);
    const scalars = f.locals(F, rows);
    f.set(kVec, op('i32.and', k, -4));
    f.set(nVec, op('i32.and', n, -4));
    f.set(rowBytes, bytes(k));
    f.set(ldoBytes, bytes(ldo));

    /**
     * The dot products of A's rows [i, i + r) with W's rows [j, j + cols), cols 4 or 1; with `touch`, one 64-byte
     * line a step of the 4 rows at `ahead` too (k / 4 steps of 64 bytes: all 16k bytes of them).
     */
    const tile = (r: number, cols: number, touch = false) => {
      for (let t = 0; t < r; t++) f.set(ap[t], add(aRow, mul(t, rowBytes)));
      for (let c = 0; c < cols; c++) f.set(wp[c], add(wRow, mul(c, rowBytes)));
      for (let t = 0; t < r; t++) for (let c = 0; c < cols; c++) f.set(acc[t][c], v128Zero);
      f.for(q, 0, kVec, 4, () => {
        if (touch) {
          f.set(touched, simd('v128.or', touched, simdLoad('v128.load', ahead)));
          f.set(ahead, add(ahead, 64));
        }
        for (let c = 0; c < cols; c++) f.set(wv[c], simdLoad('v128.load', wp[c]));
        for (let t = 0; t < r; t++) {
          f.set(av, simdLoad('v128.load', ap[t]));
          for (let c = 0; c < cols; c++) f.set(acc[t][c], mulAdd(features, av, wv[c], acc[t][c]));
          f.set(ap[t], add(ap[t], 16));
        }
        for (let c = 0; c < cols; c++) f.set(wp[c], add(wp[c], 16));
      });
      f.set(o, add(out, add(mul(i, ldoBytes), bytes(j))));
      if (cols === 4) {
        for (let t = 0; t < r; t++) {
          f.set(wv[0], pairSums(acc[t][0], acc[t][1]));
          f.set(wv[1], pairSums(acc[t][2], acc[t][3]));
          f.set(sums[t], laneSums4(wv[0], wv[1]));
        }
        // The last k mod 4 steps: W's 4 values of the step gathered into one vector.
        f.for(q, kVec, k, 1, () => {
          f.set(wv[0], shuffle32(splat(wp[0]), splat(wp[1]), [0, 4, 0, 4]));
          f.set(wv[1], shuffle32(splat(wp[2]), splat(wp[3]), [0, 4, 0, 4]));
          f.set(wv[0], shuffle32(wv[0], wv[1], [0, 1, 4, 5]));
          for (let t = 0; t < r; t++) {
            f.set(sums[t], mulAdd(features, splat(ap[t]), wv[0], sums[t]));
            f.set(ap[t], add(ap[t], 4));
          }
          for (let c = 0; c < 4; c++) f.set(wp[c], add(wp[c], 4));
        });
        for (let t = 0; t < r; t++) f.storeV128(add(o, mul(t, ldoBytes)), sums[t]);
        return;
      }
      for (let t = 0; t < r; t++) f.set(scalars[t], laneSum(acc[t][0]));
      f.for(q, kVec, k, 1, () => {
        for (let t = 0; t < r; t++) {
          f.set(scalars[t], fadd(scalars[t], fmul(load('f32.load', ap[t]), load('f32.load', wp[0]))));
          f.set(ap[t], add(ap[t], 4));
        }
        f.set(wp[0], add(wp[0], 4));
      });
      for (let t = 0; t < r; t++) f.store('f32.store', add(o, mul(t, ldoBytes)), scalars[t]);
    };

    /**
     * W's rows [j, j + cols) against every row tile of A; with `touchFirst`, the first full row tile touches the rows
     * TOUCH_AHEAD_ROWS further on (or, for the last blocks, its own rows: never past W).
     */
    const columns = (cols: number, touchFirst = false) => {
      f.set(wRow, add(w, mul(j, rowBytes)));
      f.set(i, 0);
      if (touchFirst) {
        const next = add(j, cols + TOUCH_AHEAD_ROWS);
        f.set(ahead, op('select', add(wRow, mul(TOUCH_AHEAD_ROWS, rowBytes)), wRow, op('i32.le_s', next, n)));
        f.if(op('i32.le_s', rows, m), () => {
          f.set(aRow, a);
          tile(rows, cols, true);
          f.set(i, rows);
        });
      }
      forRowTiles(f, i, i, m, rows, (r) => {
        f.set(aRow, add(a, mul(i, rowBytes)));
        tile(r, cols);
      });
    };

    f.for(entry, 0, batch, 1, () => {
      f.for(j, 0, nVec, 4, () => columns(4, true));
      f.for(j, nVec, n, 1, () => columns(1));
      f.set(a, add(a, aStep));
      f.set(w, add(w, wStep));
      f.set(out, add(out, oStep));
    });
  },
});
