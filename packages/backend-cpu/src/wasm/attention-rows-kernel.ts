import {
  f32 as f32Const,
  i32x4,
  type KernelFeatures,
  type Local,
  laneMax,
  laneSum,
  laneSums4,
  load,
  mulAdd,
  type Operand,
  op,
  pairSums,
  scalar,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { GEMM_WORK_BYTES } from './gemm-kernel';
import { BLOCK_BYTES, LANES, overRow } from './head-row';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { emitExpClamped, mul, sub } from './vector-exp';

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const { add, sub: isub, mul: imul, min: imin, bytes } = scalar;

/**
 * The most query rows of a block: its rows of weights and of ds (each [rows, S]) stay in the caches while the
 * backward's sums over them run key by key; more rows read and write dk and dv less often but run over more hidden
 * keys under a causal mask. Backward, one thread, [12, 64, 4, 32]: 8 rows 1167-1173 us, 4 1195-1204, 16 1232-1234,
 * 32 1433-1454.
 */
const BLOCK_ROWS = 8;

/** The bytes of one row of a block's matrices for S keys: S values, a vector of padding and one of slack. */
export function blockRowBytes(s: number): number {
  return ((4 * s + 15) & -16) + 32;
}

/** The byte addresses and sizes both kernels take (the forward's output or the backward's gradients aside). */
interface Common {
  readonly q: Local;
  readonly k: Local;
  readonly v: Local;
  readonly ranges: Local;
  readonly p0: Local;
  readonly p1: Local;
  readonly t0: Local;
  readonly t1: Local;
  readonly hkv: Local;
  readonly group: Local;
  readonly t: Local;
  readonly hd: Local;
  readonly kvBatchBytes: Local;
  readonly qRowBytes: Local;
  readonly kvRowBytes: Local;
  readonly scale: Local;
  readonly work: Local;
}

/** The backward's operands: the output's gradient (read like q) and the gradients it writes. */
interface Gradients {
  readonly grad: Local;
  readonly dq: Local;
  readonly dk: Local;
  readonly dv: Local;
}

/** A query row of the dot products: its head row, where its sums go, its pointers and, in the backward, its keys. */
interface DotRow {
  readonly query: Local;
  readonly into: Operand;
  /** The head row's piece being read. */
  readonly pointer: Local;
  /** The running maximum of the scores by lane, then over the lanes. */
  readonly m: Local;
  readonly max: Local;
  /** The keys the row sees, [first, end), and the same in all lanes (the other keys score -Infinity). */
  readonly own?: {
    readonly first: Local;
    readonly end: Local;
    readonly firstKeys: Local;
    readonly endKeys: Local;
  };
}

/**
 * The body of `attend_rows_f32` (`out` given) and `attend_grad_f32` (`gradients` given): for the (batch row, kv head)
 * pairs [p0, p1) (pair p is batch row p / Hkv, kv head p mod Hkv), each of the `group` query heads that share the
 * kv head, the query rows [t0, t1) in blocks of up to BLOCK_ROWS, each row t with its visible keys [start, end)
 * from `ranges` (an i32 pair per query, T per batch row). Every row of a block runs over the keys any of them sees,
 * [u0, u1), hiding the others by a mask (score -Infinity, weight exactly 0), so that each row's loops run the same
 * number of times (a loop whose count changes from row to row mispredicts its exit). Two rows at a time, in the
 * block's matrices in the thread's work area (row i of the block at blockRowBytes(S) i, column c for key u0 + c):
 * 1. their scores s_j = scale q·k_j into their rows of the weights (and for the backward dp_j = grad·v_j into their
 *    rows of the gradients), four keys at a time, each key vector loaded once for both rows, the sums transposed
 *    into one vector a row; the rows padded to whole vectors;
 * 2. per row, the numerators e_j = e^(s_j - max) and 1 / Σ e (the backward: ds_j = scale p_j (dp_j - D) with
 *    p_j = e_j / Σ e and D = Σ p_j dp_j, softmax's backward with attention's scale folded in, and p_j kept);
 * 3. out = Σ_j e_j v_j / Σ e (the backward: dq += Σ_j ds_j k_j), each vector of v (of k) loaded once for both rows;
 * 4. the backward, once a block: dk_j += Σ_i ds_ij q_i, then dv_j += Σ_i p_ij grad_i over the block's rows i, two
 *    keys at a time in registers (added to dk and dv as to dq; a pair adds to its own kv head only, so pairs may
 *    run at once). A query at a time, each dk and dv row was read and written once a query.
 * One thread, q, k, v [12, 64, 4, 32], against a query at a time (each over its own keys, dk and dv added per query):
 * forward 674-718 -> 561-573 us, backward 1604-1696 -> 1160-1175 (inputs in the caches, medians of 200 calls).
 * A query that sees no key gets 0 (and adds nothing). hd must be a multiple of 4.
 */
function emitRows(
  f: FunctionBuilder,
  c: Common,
  features: KernelFeatures,
  target: { readonly out: Local } | { readonly gradients: Gradients },
): void {
  const g = 'gradients' in target ? target.gradients : undefined;
  const [pair, batch, kvHead, head, row, j, d] = f.locals(I, 7);
  const [rowBytes, blockEnd, countBytes, padBytes, qb, kb, rb, qi, gi, oi, kr, kj, ds] = f.locals(I, 13);
  const [qp, dkr, vMinusK, weights] = f.locals(I, 4);
  const keyRows = f.locals(I, LANES);
  const acc = f.locals(V, 2 * LANES);
  const [a, b, m, e, z, kk, inverse] = f.locals(V, 7);
  const [max, total] = f.locals(F, 2);
  // The blocks of query rows.
  const [blockRow, blockLast, rows, u0, u1, slotBytes, blockRows, matrixBytes, slot, column, i, fp, sp] =
    f.locals(I, 13);
  // The second row of a pair.
  const [rowFirst, rowEnd, row2, first2, end2, qi2, gi2, oi2, slot2, qp2] = f.locals(I, 10);
  const [s0, s1, x, keyIndex, firstKeys, endKeys, firstKeys2, endKeys2, m2, inverse2] = f.locals(V, 10);
  const max2 = f.local(F);
  const scaleVector = f.local(V);
  f.set(scaleVector, simd('f32x4.splat', c.scale));
  f.set(rowBytes, op('i32.shl', c.hd, 2));
  f.set(blockEnd, op('i32.and', rowBytes, -BLOCK_BYTES));
  // v's rows lie where k's do, this many bytes on (and dk's, dv's).
  f.set(vMinusK, op('i32.sub', c.v, c.k));

  /**
   * 1. The dot products of each row's `query` with the keys' rows from `first` on (countBytes of them) into its row
   * `into`, scaled (the scores, their maximum in the row's `max`) or not (dp), padded to whole vectors with -Infinity
   * (or 0); with `own`, the keys outside [own.first, own.end) score -Infinity. Four keys at a time, each load of a
   * key vector serving both rows (8 independent multiply-adds), the sums transposed into one vector a row.
   */
  const dots = (rowsOf: readonly [DotRow, DotRow], first: Operand, scaled: boolean) => {
    const masked = rowsOf[0].own !== undefined;
    f.set(kj, first);
    for (const row of rowsOf) f.set(row.m, f.constant(Number.NEGATIVE_INFINITY));
    if (masked) f.set(keyIndex, simd('i32x4.add', simd('i32x4.splat', u0), i32x4([0, 1, 2, 3])));
    f.for(j, 0, op('i32.and', countBytes, -16), 16, () => {
      for (let r = 0; r < LANES; r++)
        f.set(keyRows[r], r === 0 ? kj : add(kj, op('i32.mul', c.kvRowBytes, r)));
      for (const row of rowsOf) f.set(row.pointer, row.query);
      for (const sum of acc) f.set(sum, v128Zero);
      overRow(f, d, blockEnd, rowBytes, (vectors) => {
        for (let u = 0; u < vectors; u++) {
          f.set(a, simdLoad('v128.load', rowsOf[0].pointer, 16 * u));
          f.set(b, simdLoad('v128.load', rowsOf[1].pointer, 16 * u));
          for (let r = 0; r < LANES; r++) {
            f.set(x, simdLoad('v128.load', keyRows[r], 16 * u));
            f.set(acc[r], mulAdd(features, a, x, acc[r]));
            f.set(acc[LANES + r], mulAdd(features, b, x, acc[LANES + r]));
          }
        }
        for (const p of [...rowsOf.map((row) => row.pointer), ...keyRows]) f.set(p, add(p, 16 * vectors));
      });
      rowsOf.forEach((row, n) => {
        // Transposed sums: lane r is key r's.
        f.set(a, pairSums(acc[LANES * n], acc[LANES * n + 1]));
        f.set(b, pairSums(acc[LANES * n + 2], acc[LANES * n + 3]));
        f.set(a, scaled ? mul(laneSums4(a, b), scaleVector) : laneSums4(a, b));
        if (row.own) {
          const visible = simd(
            'v128.and',
            simd('i32x4.ge_s', keyIndex, row.own.firstKeys),
            simd('i32x4.lt_s', keyIndex, row.own.endKeys),
          );
          f.set(a, simd('v128.bitselect', a, f.constant(Number.NEGATIVE_INFINITY), visible));
        }
        f.storeV128(add(row.into, j), a);
        if (scaled) f.set(row.m, simd('f32x4.max', row.m, a));
      });
      if (masked) f.set(keyIndex, simd('i32x4.add', keyIndex, simd('i32x4.splat', 4)));
      f.set(kj, add(kj, op('i32.shl', c.kvRowBytes, 2)));
    });
    if (scaled) for (const row of rowsOf) f.set(row.max, laneMax(row.m));
    // The last count mod 4 keys one at a time.
    f.for(j, j, countBytes, 4, () => {
      f.set(acc[0], v128Zero);
      f.set(acc[1], v128Zero);
      f.for(d, 0, rowBytes, 16, () => {
        f.set(x, simdLoad('v128.load', add(kj, d)));
        rowsOf.forEach((row, n) => {
          f.set(acc[n], mulAdd(features, simdLoad('v128.load', add(row.query, d)), x, acc[n]));
        });
      });
      rowsOf.forEach((row, n) => {
        f.set(total, scaled ? op('f32.mul', laneSum(acc[n]), c.scale) : laneSum(acc[n]));
        if (row.own) {
          const key = add(u0, op('i32.shr_u', j, 2));
          const visible = op('i32.and', op('i32.ge_s', key, row.own.first), op('i32.lt_s', key, row.own.end));
          f.set(total, op('select', total, f32Const(Number.NEGATIVE_INFINITY), visible));
        }
        f.store('f32.store', add(row.into, j), total);
        if (scaled) f.set(row.max, op('f32.max', row.max, total));
      });
      f.set(kj, add(kj, c.kvRowBytes));
    });
    // Padding up to the next whole vector: score -Infinity (weight 0), dp 0.
    for (const row of rowsOf) {
      f.storeV128(add(row.into, countBytes), scaled ? f.constant(Number.NEGATIVE_INFINITY) : v128Zero);
    }
  };

  /**
   * 2. The weights' numerators e_j = e^(s_j - max) in place, exactly 0 for the keys scored -Infinity (hidden keys,
   * padding: the clamped exp alone gives them e^-87), and `inverse` = 1 / Σ e in all lanes (0 for a row that sees
   * no key, whose max is then taken as 0); the backward's ds_j = scale p_j (dp_j - D) with p_j = e_j / Σ e and
   * D = Σ p_j dp_j into the gradient row, and p_j in place of e_j.
   */
  const softmax = () => {
    f.set(max, op('select', max, f32Const(0), op('f32.gt', max, f32Const(Number.NEGATIVE_INFINITY))));
    f.set(m, simd('f32x4.splat', max));
    f.set(a, v128Zero);
    f.set(b, v128Zero);
    f.for(j, 0, padBytes, 16, () => {
      f.set(z, simdLoad('v128.load', add(weights, j)));
      f.set(x, simd('f32x4.eq', z, f.constant(Number.NEGATIVE_INFINITY)));
      f.set(z, sub(z, m));
      emitExpClamped(f, z, kk, e);
      f.set(e, simd('v128.andnot', e, x));
      f.storeV128(add(weights, j), e);
      f.set(a, simd('f32x4.add', a, e));
      if (g) f.set(b, mulAdd(features, e, simdLoad('v128.load', add(ds, j)), b));
    });
    f.set(total, laneSum(a));
    f.set(
      total,
      op('select', op('f32.div', f32Const(1), total), f32Const(0), op('f32.gt', total, f32Const(0))),
    );
    f.set(inverse, simd('f32x4.splat', total));
    if (!g) return;
    // D = Σ e dp / Σ e; then ds = e (dp - D) (scale / Σ e).
    f.set(m, simd('f32x4.splat', op('f32.mul', laneSum(b), total)));
    f.set(z, mul(inverse, scaleVector));
    f.for(j, 0, padBytes, 16, () => {
      f.set(e, simdLoad('v128.load', add(weights, j)));
      f.storeV128(add(ds, j), mul(mul(e, sub(simdLoad('v128.load', add(ds, j)), m)), z));
      f.storeV128(add(weights, j), mul(e, inverse));
    });
  };

  // The block matrices: rows of blockRowBytes(S), as many as BLOCK_ROWS and the work area allow.
  f.set(
    slotBytes,
    add(op('i32.and', add(bytes(op('i32.div_u', c.kvBatchBytes, c.kvRowBytes)), 15), -16), 32),
  );
  f.set(blockRows, imin(BLOCK_ROWS, op('i32.div_u', GEMM_WORK_BYTES / 2, slotBytes)));
  f.set(matrixBytes, imul(blockRows, slotBytes));

  /**
   * 3. The pair's two rows of out = Σ_j e_j v_j / Σ e (the forward: e from their weights rows, the two rows' 1 / Σ e
   * in `inverse2` and `inverse`) or of dq = Σ_j ds_j k_j (the backward: ds from their rows of the gradient matrix),
   * LANES vectors of the head at a time, each vector of v (of k) loaded once for both.
   */
  const pairOutputs = () => {
    const [matrix, keys] = g ? [matrixBytes, kr] : [0, add(kr, vMinusK)];
    overRow(f, d, blockEnd, rowBytes, (vectors) => {
      for (let u = 0; u < 2 * vectors; u++) f.set(acc[u], v128Zero);
      f.set(kj, add(keys, d));
      f.set(fp, add(slot, matrix));
      f.set(sp, add(slot2, matrix));
      f.for(j, 0, countBytes, 4, () => {
        f.set(s0, simdLoad('v128.load32_splat', add(fp, j)));
        f.set(s1, simdLoad('v128.load32_splat', add(sp, j)));
        for (let u = 0; u < vectors; u++) {
          f.set(x, simdLoad('v128.load', kj, 16 * u));
          f.set(acc[u], mulAdd(features, s0, x, acc[u]));
          f.set(acc[vectors + u], mulAdd(features, s1, x, acc[vectors + u]));
        }
        f.set(kj, add(kj, c.kvRowBytes));
      });
      const store = (n: number, out: Local, inv: Local) => {
        for (let u = 0; u < vectors; u++) {
          const at = 16 * u;
          // The backward adds to dq.
          const sum = g
            ? simd('f32x4.add', simdLoad('v128.load', add(out, d), at), acc[n + u])
            : mul(acc[n + u], inv);
          f.storeV128(add(out, d), sum, at);
        }
      };
      store(0, oi, inverse2);
      // The pair's second row, unless it is the first again (an odd end of the block).
      f.if(op('i32.lt_s', row, row2), () => store(vectors, oi2, inverse));
    });
  };

  /**
   * 4. The block's sums into the kv rows, key by key: into_j += Σ_i factors[i][j] source_i over the block's query
   * rows i (factors: ds and q into dk, then p and grad into dv), two keys and LANES vectors of the head at a time
   * in registers, each kv row read and written once a block (a query at a time, they were read and written once a
   * query). Keys a row does not see have factors 0.
   */
  const keyMajor = (factors: Operand, source: Operand, into: Operand) => {
    const columns = (keys: number) =>
      overRow(f, d, blockEnd, rowBytes, (vectors) => {
        for (let u = 0; u < keys * vectors; u++) f.set(acc[u], v128Zero);
        f.set(fp, add(factors, column));
        f.set(sp, add(source, d));
        f.for(i, 0, rows, 1, () => {
          for (let key = 0; key < keys; key++)
            f.set([s0, s1][key], simdLoad('v128.load32_splat', fp, 4 * key));
          for (let u = 0; u < vectors; u++) {
            f.set(x, simdLoad('v128.load', sp, 16 * u));
            for (let key = 0; key < keys; key++) {
              const sum = acc[key * vectors + u];
              f.set(sum, mulAdd(features, [s0, s1][key], x, sum));
            }
          }
          f.set(fp, add(fp, slotBytes));
          f.set(sp, add(sp, c.qRowBytes));
        });
        f.set(dkr, add(add(into, imul(add(u0, op('i32.shr_u', column, 2)), c.kvRowBytes)), d));
        for (let key = 0; key < keys; key++) {
          for (let u = 0; u < vectors; u++) {
            const at = 16 * u;
            f.storeV128(dkr, simd('f32x4.add', simdLoad('v128.load', dkr, at), acc[key * vectors + u]), at);
          }
          if (key + 1 < keys) f.set(dkr, add(dkr, c.kvRowBytes));
        }
      });
    f.for(column, 0, op('i32.and', countBytes, -8), 8, () => columns(2));
    f.for(column, column, countBytes, 4, () => columns(1));
  };

  f.for(pair, c.p0, c.p1, 1, () => {
    f.set(batch, op('i32.div_u', pair, c.hkv));
    f.set(kvHead, op('i32.sub', pair, op('i32.mul', batch, c.hkv)));
    // Byte offsets of the pair's first query head in q (grad, out, dq) and of its kv head in k (v, dk, dv).
    f.set(
      qb,
      add(
        op('i32.mul', op('i32.mul', batch, c.t), c.qRowBytes),
        op('i32.mul', op('i32.mul', kvHead, c.group), rowBytes),
      ),
    );
    f.set(kb, add(op('i32.mul', batch, c.kvBatchBytes), op('i32.mul', kvHead, rowBytes)));
    f.set(rb, add(c.ranges, op('i32.mul', op('i32.mul', batch, c.t), 8)));
    f.for(head, 0, c.group, 1, () => {
      // Byte offset of this query head's row 0 in q (grad, out, dq).
      const headAt = add(qb, imul(head, rowBytes));
      f.for(blockRow, c.t0, c.t1, blockRows, () => {
        f.set(blockLast, imin(add(blockRow, blockRows), c.t1));
        f.set(rows, isub(blockLast, blockRow));
        // [u0, u1): the keys some row of the block sees (none: [0, 0)).
        f.set(u0, 0x7fffffff);
        f.set(u1, 0);
        f.for(row, blockRow, blockLast, 1, () => {
          const range = add(rb, op('i32.shl', row, 3));
          f.set(rowFirst, load('i32.load', range));
          f.set(rowEnd, load('i32.load', range, 4));
          f.if(op('i32.lt_s', rowFirst, rowEnd), () => {
            f.set(u0, imin(rowFirst, u0));
            f.set(u1, op('select', rowEnd, u1, op('i32.gt_s', rowEnd, u1)));
          });
        });
        f.set(u0, imin(u0, u1));
        f.set(countBytes, bytes(isub(u1, u0)));
        // Every row of the block over the block's keys (the same loops for each), its own keys by a mask: the keys
        // it does not see score -Infinity and get p = ds = 0 exactly. Its p and ds go to its rows of the matrices.
        f.set(padBytes, op('i32.and', add(countBytes, 15), -16));
        f.set(kr, add(add(c.k, kb), imul(u0, c.kvRowBytes)));
        // The rows two at a time (the pair's second row is its first again at an odd end of the block).
        f.for(row, blockRow, blockLast, 2, () => {
          f.set(row2, imin(add(row, 1), isub(blockLast, 1)));
          const rowOf = (
            r: Local,
            own: Local,
            q: Local,
            grad: Local,
            out: Local,
            first: Local,
            end: Local,
          ) => {
            f.set(own, add(c.work, imul(isub(r, blockRow), slotBytes)));
            const at = add(headAt, imul(r, c.qRowBytes));
            f.set(q, add(c.q, at));
            if (g) f.set(grad, add(g.grad, at));
            f.set(out, add(g ? g.dq : (target as { readonly out: Local }).out, at));
            const range = add(rb, op('i32.shl', r, 3));
            f.set(first, load('i32.load', range));
            f.set(end, load('i32.load', range, 4));
          };
          rowOf(row, slot, qi, gi, oi, rowFirst, rowEnd);
          rowOf(row2, slot2, qi2, gi2, oi2, first2, end2);
          f.set(firstKeys, simd('i32x4.splat', rowFirst));
          f.set(endKeys, simd('i32x4.splat', rowEnd));
          f.set(firstKeys2, simd('i32x4.splat', first2));
          f.set(endKeys2, simd('i32x4.splat', end2));
          const own = { first: rowFirst, end: rowEnd, firstKeys, endKeys };
          const own2 = { first: first2, end: end2, firstKeys: firstKeys2, endKeys: endKeys2 };
          dots(
            [
              { query: qi, into: slot, pointer: qp, m, max, own },
              { query: qi2, into: slot2, pointer: qp2, m: m2, max: max2, own: own2 },
            ],
            kr,
            true,
          );
          if (g) {
            dots(
              [
                { query: gi, into: add(slot, matrixBytes), pointer: qp, m, max },
                { query: gi2, into: add(slot2, matrixBytes), pointer: qp2, m: m2, max: max2 },
              ],
              add(kr, vMinusK),
              false,
            );
          }
          f.set(weights, slot);
          f.set(ds, add(slot, matrixBytes));
          softmax();
          f.set(inverse2, inverse);
          f.if(op('i32.lt_s', row, row2), () => {
            f.set(weights, slot2);
            f.set(ds, add(slot2, matrixBytes));
            f.set(max, max2);
            softmax();
          });
          pairOutputs();
        });
        if (!g) return;
        const blockAt = add(headAt, imul(blockRow, c.qRowBytes));
        keyMajor(add(c.work, matrixBytes), add(c.q, blockAt), add(g.dk, kb));
        keyMajor(c.work, add(g.grad, blockAt), add(g.dv, kb));
      });
    });
  });
}

const COMMON_SIZES = i32('ranges', 'p0', 'p1', 't0', 't1', 'hkv', 'group', 't', 'hd');
const COMMON_STRIDES = i32('kvBatchBytes', 'qRowBytes', 'kvRowBytes');

/**
 * `attend_rows_f32`: attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] into out [B, T, H, hd] for the
 * (batch row, kv head) pairs [p0, p1) and query rows [t0, t1), in blocks of rows (`emitRows`). Parameters: byte
 * addresses, the ranges' address, pair and row ranges, sizes, strides in bytes (a batch row of k, a row of q and of k), then the f32 scale.
 */
export const ATTEND_ROWS = kernel({
  name: 'attend_rows_f32',
  params: [...i32('q', 'k', 'v', 'out'), ...COMMON_SIZES, ...COMMON_STRIDES, ...f32('scale')],
  emit(f, params, { features }) {
    emitRows(f, params, features, { out: params.out });
  },
});

/**
 * `attend_grad_f32`: the gradients of attention for the gradient `grad` of its output (shaped like q), into dq
 * (like q), dk and dv (like k), which it adds to, for the pairs [p0, p1) (`emitRows`; the rows [t0, t1) of a
 * pair add to the same dk and dv, so one call takes all of them). Parameters as `attend_rows_f32`'s with grad, dq,
 * dk and dv in place of out.
 */
export const ATTEND_GRAD = kernel({
  name: 'attend_grad_f32',
  params: [
    ...i32('q', 'k', 'v', 'grad', 'dq', 'dk', 'dv'),
    ...COMMON_SIZES,
    ...COMMON_STRIDES,
    ...f32('scale'),
  ],
  emit(f, params, { features }) {
    emitRows(f, params, features, { gradients: params });
  },
});
