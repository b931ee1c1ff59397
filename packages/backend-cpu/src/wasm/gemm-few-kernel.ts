import {
  type KernelFeatures,
  type Local,
  lane,
  laneSums4,
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

const { add, sub, mul, bytes } = scalar;

const I = ValType.i32;
const V = ValType.v128;
/** Rows of A per register tile, each with a vector accumulator per row of W's block (3 rows spill). */
const GEMM_FEW_T_ROWS = 2;
/**
 * Rows of W per block, one from each of as many parts of W: 6 where the compiler keeps wide tiles in registers (2 x 6
 * accumulators, A's 2 vectors and W's one fill x64's 15), else 4.
 */
const blockRows = (features: KernelFeatures) => (features.wideTiles ? 6 : 4);
/**
 * The column of a block of `cols` columns in lane `c` of its group `g`: the groups are of 4 lanes, and a last group of
 * fewer columns repeats them (1 column in all 4 lanes, 2 in lanes 0, 1 and again 2, 3).
 */
const groupColumn = (g: number, c: number, cols: number) =>
  4 * g + (4 * g + c < cols ? c : c % (cols - 4 * g));
const splat = (address: Operand) => simdLoad('v128.load32_splat', address);

/**
 * Calls `tile(rows)` for the rows [from, m) of the output in tiles of `rows` rows, counting rows
 * with `i`: full tiles, then one smaller tile for what is left (each size's code emitted once).
 */
export function forRowTiles(
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

/**
 * `gemm_few_t`: out[i, j] = sum_q A[i, q] W[j, q] for i < m, j < n, with A row-major [m, k], W
 * row-major [n, k] (a weight stored [out, in]) and out rows ldo apart. Built for few rows (up to the 128 of a
 * prefill, where it beats the packed gemm: it packs nothing): W is read once, a block of 4 or 6 rows (`blockRows`)
 * at a time, and each block stays in L1 while the dot products of all rows of A with it accumulate in
 * GEMM_FEW_T_ROWS x 4 or 6 vector registers. The rows of a
 * block come from as many equal parts of W (row j of each; the last rows after them, one at a time), so W is read as
 * 4 or 6 sequential streams: a core has more of memory's reads in flight, and they overlap the arithmetic (8 streams
 * of batched decode on 2 threads, 15M shape: 6.3-6.6 -> 5.2-5.4 ms a step, against 4 adjacent rows and a touch of
 * the block two ahead). Six rows: 12 accumulators hide the multiply-add's latency, which 8 do not (a loop of nothing
 * but independent multiply-adds: 54-55 GFLOP/s a core with 8, 64 with 12); one thread, [8,288] x [32000,288]ᵀ
 * 42.4 -> 48.6 GFLOP/s; 8 streams of batched decode (`pnpm bench serve`, 15M shape, Node 26, 2 threads, 6
 * alternations) 1812-2055 -> 1960-2306 tok/s.
 * Every output is the same sum, bit for bit, whatever the block and the row's place in it: per lane in order of k,
 * the lanes as (l0 + l2) + (l1 + l3), then the last k mod 4 steps by multiply-adds.
 * Parameters: pointers and steps in bytes, sizes and `ldo`, the output's row stride, in elements.
 */
export const GEMM_FEW_T = kernel({
  name: 'gemm_few_t',
  params: i32('batch', 'aStep', 'wStep', 'oStep', 'm', 'n', 'k', 'ldo', 'a', 'w', 'out'),
  emit(f, { batch, aStep, wStep, oStep, m, n, k, ldo, a, w, out }, { features }) {
    const entry = f.local(I);
    f.for(entry, 0, batch, 1, () => {
      emitGemmFewT(f, { m, n, k, ldo, a, w, out }, features);
      f.set(a, add(a, aStep));
      f.set(w, add(w, wStep));
      f.set(out, add(out, oStep));
    });
  },
});

/** The operands of one gemm_few_t product (see GEMM_FEW_T): sizes in elements, pointers in bytes. */
export interface GemmFewOperands {
  readonly m: Local;
  readonly n: Local;
  readonly k: Local;
  readonly ldo: Local;
  readonly a: Local;
  readonly w: Local;
  readonly out: Local;
}

/** Emits gemm_few_t's product of one batch entry into `f` (it reads the operands' locals and changes none). */
export function emitGemmFewT(
  f: FunctionBuilder,
  { m, n, k, ldo, a, w, out }: GemmFewOperands,
  features: KernelFeatures,
): void {
  const rows = GEMM_FEW_T_ROWS;
  const parts = blockRows(features);
  // Vectors of k per pass of the main loop: 2 in wide tiles (their 8 pointers move half as often: one thread,
  // [8,288] x [32000,288]ᵀ, 47-50 -> 50-53 GFLOP/s on Node 26), 1 where the compiler would hoist the second
  // vector's loads too (Node 20: 48 -> 38).
  const unroll = features.wideTiles ? 2 : 1;
  const [i, j, q, kVec, kMain, perPart, rowBytes, ldoBytes, wRow, aRow, o] = f.locals(I, 11);
  const ap = f.locals(I, rows);
  const wp = f.locals(I, parts);
  const acc = Array.from({ length: rows }, () => f.locals(V, parts));
  const wv = f.local(V);
  const av = f.locals(V, rows);
  const sums = Array.from({ length: rows }, () => f.locals(V, Math.ceil(parts / 4)));
  f.set(kVec, op('i32.and', k, -4));
  f.set(kMain, op('i32.and', k, -4 * unroll));
  f.set(perPart, op('i32.div_u', n, parts));
  f.set(rowBytes, bytes(k));
  f.set(ldoBytes, bytes(ldo));

  /**
   * The dot products of A's rows [i, i + r) with W's row j of each of its parts (cols = parts, at wRow, wRow +
   * perPart rows, ...) or its row j alone (cols 1). Per step of k: A's r vectors in registers, then W's vectors one
   * at a time, each against every row.
   */
  const tile = (r: number, cols: number) => {
    for (let t = 0; t < r; t++) f.set(ap[t], add(aRow, mul(t, rowBytes)));
    for (let c = 0; c < cols; c++) f.set(wp[c], add(wRow, mul(mul(c, perPart), rowBytes)));
    for (let t = 0; t < r; t++) for (let c = 0; c < cols; c++) f.set(acc[t][c], v128Zero);
    const step = (vectors: number) => {
      for (let u = 0; u < vectors; u++) {
        for (let t = 0; t < r; t++) f.set(av[t], simdLoad('v128.load', ap[t], 16 * u));
        for (let c = 0; c < cols; c++) {
          f.set(wv, simdLoad('v128.load', wp[c], 16 * u));
          for (let t = 0; t < r; t++) f.set(acc[t][c], mulAdd(features, av[t], wv, acc[t][c]));
        }
      }
      for (let t = 0; t < r; t++) f.set(ap[t], add(ap[t], 16 * vectors));
      for (let c = 0; c < cols; c++) f.set(wp[c], add(wp[c], 16 * vectors));
    };
    f.for(q, 0, kMain, 4 * unroll, () => step(unroll));
    if (unroll > 1) f.for(q, kMain, kVec, 4, () => step(1));
    f.set(o, add(out, add(mul(i, ldoBytes), bytes(j))));
    const groups = Math.ceil(cols / 4);
    // Lanes of sums[t][g]: the dot products of row t with the block's columns 4g.. (see groupColumn).
    for (let t = 0; t < r; t++) {
      for (let g = 0; g < groups; g++) {
        const [x, y, z, u] = [0, 1, 2, 3].map((c) => acc[t][groupColumn(g, c, cols)]);
        f.set(av[0], pairSums(x, y));
        f.set(av[1], 4 * g + 2 < cols ? pairSums(z, u) : av[0]);
        f.set(sums[t][g], laneSums4(av[0], av[1]));
      }
    }
    // The last k mod 4 steps: W's values of the step gathered into one vector per group.
    f.for(q, kVec, k, 1, () => {
      for (let g = 0; g < groups; g++) {
        const w4 = [0, 1, 2, 3].map((c) => wp[groupColumn(g, c, cols)]);
        f.set(av[0], shuffle32(splat(w4[0]), splat(w4[1]), [0, 4, 0, 4]));
        f.set(av[1], shuffle32(splat(w4[2]), splat(w4[3]), [0, 4, 0, 4]));
        f.set(wv, shuffle32(av[0], av[1], [0, 1, 4, 5]));
        for (let t = 0; t < r; t++) f.set(sums[t][g], mulAdd(features, splat(ap[t]), wv, sums[t][g]));
      }
      for (let t = 0; t < r; t++) f.set(ap[t], add(ap[t], 4));
      for (let c = 0; c < cols; c++) f.set(wp[c], add(wp[c], 4));
    });
    for (let t = 0; t < r; t++) {
      for (let c = 0; c < cols; c++)
        f.store(
          'f32.store',
          add(add(o, mul(t, ldoBytes)), bytes(mul(c, perPart))),
          lane('f32x4.extract_lane', sums[t][c >> 2], c & 3),
        );
    }
  };

  /** W's row j of each part (cols = parts) or row j alone (cols 1) against every row tile of A. */
  const columns = (cols: number) => {
    f.set(wRow, add(w, mul(j, rowBytes)));
    forRowTiles(f, i, 0, m, rows, (r) => {
      f.set(aRow, add(a, mul(i, rowBytes)));
      tile(r, cols);
    });
  };

  f.for(j, 0, perPart, 1, () => columns(parts));
  f.for(j, mul(perPart, parts), n, 1, () => columns(1));
}
