import {
  type Local,
  lane,
  laneSums4,
  load,
  mulAdd,
  type Operand,
  op,
  pairSums,
  scalar,
  shuffle32,
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
 * products of all rows of A with it accumulate in GEMM_FEW_T_ROWS x 4 vector registers. The 4 rows
 * of a block come from the 4 quarters of W (row j of each; the last n mod 4 rows after them, one at
 * a time), so W is read as 4 sequential streams: a core has more of memory's reads in flight, and
 * they overlap the arithmetic (8 streams of batched decode on 2 threads, 15M shape: 6.3-6.6 -> 5.2-5.4
 * ms a step, against 4 adjacent rows and a touch of the block two ahead). Every output is the sum it
 * was with adjacent rows, bit for bit.
 * Parameters: pointers and steps in bytes, sizes and `ldo`, the output's row stride, in elements.
 */
export const GEMM_FEW_T = kernel({
  name: 'gemm_few_t',
  params: i32('batch', 'aStep', 'wStep', 'oStep', 'm', 'n', 'k', 'ldo', 'a', 'w', 'out'),
  emit(f, { batch, aStep, wStep, oStep, m, n, k, ldo, a, w, out }, { features }) {
    const rows = GEMM_FEW_T_ROWS;
    const [entry, i, j, q, kVec, part, rowBytes, ldoBytes, wRow, aRow, o] = f.locals(I, 11);
    const ap = f.locals(I, rows);
    const wp = f.locals(I, 4);
    const acc = Array.from({ length: rows }, () => f.locals(V, 4));
    const wv = f.locals(V, 4);
    const av = f.local(V);
    const sums = f.locals(V, rows);
    const scalars = f.locals(F, rows);
    f.set(kVec, op('i32.and', k, -4));
    f.set(part, op('i32.div_u', n, 4));
    f.set(rowBytes, bytes(k));
    f.set(ldoBytes, bytes(ldo));

    /**
     * The dot products of A's rows [i, i + r) with W's row j of each quarter (cols 4, at wRow, wRow + part rows, ...)
     * or its row j alone (cols 1).
     */
    const tile = (r: number, cols: number) => {
      for (let t = 0; t < r; t++) f.set(ap[t], add(aRow, mul(t, rowBytes)));
      for (let c = 0; c < cols; c++) f.set(wp[c], add(wRow, mul(mul(c, part), rowBytes)));
      for (let t = 0; t < r; t++) for (let c = 0; c < cols; c++) f.set(acc[t][c], v128Zero);
      f.for(q, 0, kVec, 4, () => {
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
        for (let t = 0; t < r; t++) {
          for (let c = 0; c < 4; c++)
            f.store(
              'f32.store',
              add(add(o, mul(t, ldoBytes)), bytes(mul(c, part))),
              lane('f32x4.extract_lane', sums[t], c),
            );
        }
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

    /** W's row j of each quarter (cols 4) or row j alone (cols 1) against every row tile of A. */
    const columns = (cols: number) => {
      f.set(wRow, add(w, mul(j, rowBytes)));
      forRowTiles(f, i, 0, m, rows, (r) => {
        f.set(aRow, add(a, mul(i, rowBytes)));
        tile(r, cols);
      });
    };

    f.for(entry, 0, batch, 1, () => {
      f.for(j, 0, part, 1, () => columns(4));
      f.for(j, mul(part, 4), n, 1, () => columns(1));
      f.set(a, add(a, aStep));
      f.set(w, add(w, wStep));
      f.set(out, add(out, oStep));
    });
  },
});
