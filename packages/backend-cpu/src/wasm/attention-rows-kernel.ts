import {
  f32 as f32Const,
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
import { BLOCK_BYTES, LANES, overRow, overRowWide, WIDE } from './head-row';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { emitExpClamped, mul, sub } from './vector-exp';

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const { add } = scalar;

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

/**
 * The body of `attend_rows_f32` (`out` given) and `attend_grad_f32` (`gradients` given): for the (batch row, kv head)
 * pairs [p0, p1) (pair p is batch row p / Hkv, kv head p mod Hkv), each of the `group` query heads that share the
 * kv head, each query row t in [t0, t1) with its visible keys [start, end) from `ranges` (an i32 pair per query,
 * T per batch row), in the thread's work area:
 * 1. its scores s_j = scale q·k_j into the weights row (and for the backward, in a second pass, dp_j = grad·v_j into
 *    the gradient row), four keys at a time, one load of q serving four rows of k, the sums transposed into one
 *    vector; the rows padded to whole vectors;
 * 2. the numerators e_j = e^(s_j - max) and 1 / Σ e (and ds_j = scale p_j (dp_j - D) with p_j = e_j / Σ e and
 *    D = Σ p_j dp_j: softmax's backward with attention's scale folded in) over whole vectors;
 * 3. out = Σ_j p_j v_j (the backward: dq = Σ_j ds_j k_j), up to 32 elements of the head at a time in registers;
 * 4. the backward only: dk_j += ds_j q, then dv_j += p_j grad, q's (grad's) 32 elements in registers (dk and dv
 *    zeroed by the caller; a pair adds to its own kv head only, so pairs may run at once).
 * Against the first version of these steps (scores and dp in one pass, 4 accumulators, four passes of softmax,
 * 16 elements at a time, dk and dv in one pass), one thread, q, k, v [12, 64, 4, 32]: forward 902 -> 760-810 us,
 * backward 2114 -> 1900-1950.
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
  const [rowBytes, blockEnd, wideEnd, count, countBytes, padBytes, qb, kb, rb, qi, gi, oi, kr, kj, ds] =
    f.locals(I, 15);
  const [qp, dkr, vMinusK] = f.locals(I, 3);
  const keyRows = f.locals(I, LANES);
  const acc = f.locals(V, 2 * LANES);
  const [a, b, m, e, z, kk, inverse] = f.locals(V, 7);
  const [max, total] = f.locals(F, 2);
  const scaleVector = f.local(V);
  f.set(scaleVector, simd('f32x4.splat', c.scale));
  f.set(rowBytes, op('i32.shl', c.hd, 2));
  f.set(blockEnd, op('i32.and', rowBytes, -BLOCK_BYTES));
  f.set(wideEnd, op('i32.and', rowBytes, -16 * WIDE));
  const ends = { wideEnd, blockEnd, rowBytes };
  // v's rows lie where k's do, this many bytes on (and dk's, dv's).
  f.set(vMinusK, op('i32.sub', c.v, c.k));
  const weights = c.work;

  /**
   * 1. The dot products of `query` with the visible keys' rows from `first` on into the row `into`, scaled (the
   * scores, their maximum in `max`) or not (dp), padded to whole vectors with -Infinity (or 0). Four keys at a
   * time, their even and odd vectors in separate sums (8 independent multiply-adds: 4 were bound by the
   * instruction's latency), the sums transposed into one vector.
   */
  const dots = (query: Local, first: Operand, into: Local, scaled: boolean) => {
    f.set(kj, first);
    f.set(m, f.constant(Number.NEGATIVE_INFINITY));
    f.for(j, 0, op('i32.and', countBytes, -16), 16, () => {
      for (let r = 0; r < LANES; r++)
        f.set(keyRows[r], r === 0 ? kj : add(kj, op('i32.mul', c.kvRowBytes, r)));
      f.set(qp, query);
      for (const x of acc) f.set(x, v128Zero);
      overRow(f, d, blockEnd, rowBytes, (vectors) => {
        for (let u = 0; u < vectors; u++) {
          f.set(a, simdLoad('v128.load', qp, 16 * u));
          for (let r = 0; r < LANES; r++) {
            const sum = acc[r + LANES * (u % 2)];
            f.set(sum, mulAdd(features, a, simdLoad('v128.load', keyRows[r], 16 * u), sum));
          }
        }
        for (const p of [qp, ...keyRows]) f.set(p, add(p, 16 * vectors));
      });
      for (let r = 0; r < LANES; r++) f.set(acc[r], simd('f32x4.add', acc[r], acc[LANES + r]));
      // Transposed sums: lane r is key r's.
      f.set(a, pairSums(acc[0], acc[1]));
      f.set(b, pairSums(acc[2], acc[3]));
      f.set(a, scaled ? mul(laneSums4(a, b), scaleVector) : laneSums4(a, b));
      f.storeV128(add(into, j), a);
      if (scaled) f.set(m, simd('f32x4.max', m, a));
      f.set(kj, add(kj, op('i32.shl', c.kvRowBytes, 2)));
    });
    if (scaled) f.set(max, laneMax(m));
    // The last count mod 4 keys one at a time.
    f.for(j, j, countBytes, 4, () => {
      f.set(acc[0], v128Zero);
      f.for(d, 0, rowBytes, 16, () => {
        const key = simdLoad('v128.load', add(kj, d));
        f.set(acc[0], mulAdd(features, simdLoad('v128.load', add(query, d)), key, acc[0]));
      });
      f.set(total, scaled ? op('f32.mul', laneSum(acc[0]), c.scale) : laneSum(acc[0]));
      f.store('f32.store', add(into, j), total);
      if (scaled) f.set(max, op('f32.max', max, total));
      f.set(kj, add(kj, c.kvRowBytes));
    });
    // Padding up to the next whole vector: weight e^-Infinity (about 0), dp 0.
    f.storeV128(add(into, countBytes), scaled ? f.constant(Number.NEGATIVE_INFINITY) : v128Zero);
  };

  /**
   * 2. The weights' numerators e_j = e^(s_j - max) in place (by the clamped exp: the padding gets e^-87, which
   * no sum of at least 1 notices) and `inverse` = 1 / Σ e in all lanes; the backward's ds_j = scale p_j (dp_j - D)
   * with p_j = e_j / Σ e and D = Σ p_j dp_j into the gradient row.
   */
  const softmax = () => {
    f.set(m, simd('f32x4.splat', max));
    f.set(a, v128Zero);
    f.set(b, v128Zero);
    f.for(j, 0, padBytes, 16, () => {
      f.set(z, sub(simdLoad('v128.load', add(weights, j)), m));
      emitExpClamped(f, z, kk, e);
      f.storeV128(add(weights, j), e);
      f.set(a, simd('f32x4.add', a, e));
      if (g) f.set(b, mulAdd(features, e, simdLoad('v128.load', add(ds, j)), b));
    });
    f.set(total, op('f32.div', f32Const(1), laneSum(a)));
    f.set(inverse, simd('f32x4.splat', total));
    if (!g) return;
    // D = Σ e dp / Σ e; then ds = e (dp - D) (scale / Σ e).
    f.set(m, simd('f32x4.splat', op('f32.mul', laneSum(b), total)));
    f.set(z, mul(inverse, scaleVector));
    f.for(j, 0, padBytes, 16, () => {
      const ej = simdLoad('v128.load', add(weights, j));
      f.storeV128(add(ds, j), mul(mul(ej, sub(simdLoad('v128.load', add(ds, j)), m)), z));
    });
  };

  /** 3. out = Σ_j e_j v_j / Σ e, or dq = Σ_j ds_j k_j, WIDE vectors of the head at a time. */
  const weightedSum = () => {
    const [factors, first] = g ? [ds, kr] : [weights, add(kr, vMinusK)];
    overRowWide(f, d, ends, (vectors) => {
      for (let u = 0; u < vectors; u++) f.set(acc[u], v128Zero);
      f.set(kj, add(first, d));
      f.for(j, 0, countBytes, 4, () => {
        f.set(e, simdLoad('v128.load32_splat', add(factors, j)));
        for (let u = 0; u < vectors; u++) {
          f.set(acc[u], mulAdd(features, e, simdLoad('v128.load', kj, 16 * u), acc[u]));
        }
        f.set(kj, add(kj, c.kvRowBytes));
      });
      for (let u = 0; u < vectors; u++) f.storeV128(add(oi, d), g ? acc[u] : mul(acc[u], inverse), 16 * u);
    });
  };

  /**
   * 4. dk_j += ds_j q, then dv_j += e_j (grad / Σ e), WIDE vectors of q (of grad) in registers; dk and dv in
   * separate passes, as a store to dk_j and a load of dv_j 4 KiB apart (the arrays' usual distance) stall.
   */
  const keyGradients = (gr: Gradients) => {
    for (const [factors, source, into] of [
      [ds, qi, gr.dk],
      [weights, gi, gr.dv],
    ] as const) {
      overRowWide(f, d, ends, (vectors) => {
        for (let u = 0; u < vectors; u++) {
          const piece = simdLoad('v128.load', add(source, d), 16 * u);
          f.set(acc[u], source === gi ? mul(piece, inverse) : piece);
        }
        f.set(dkr, add(add(into, op('i32.sub', kr, c.k)), d));
        f.for(j, 0, countBytes, 4, () => {
          f.set(e, simdLoad('v128.load32_splat', add(factors, j)));
          for (let u = 0; u < vectors; u++) {
            f.storeV128(dkr, mulAdd(features, e, acc[u], simdLoad('v128.load', dkr, 16 * u)), 16 * u);
          }
          f.set(dkr, add(dkr, c.kvRowBytes));
        });
      });
    }
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
      f.for(row, c.t0, c.t1, 1, () => {
        const at = add(add(qb, op('i32.mul', head, rowBytes)), op('i32.mul', row, c.qRowBytes));
        f.set(qi, add(c.q, at));
        f.set(oi, add(g ? g.dq : (target as { readonly out: Local }).out, at));
        if (g) f.set(gi, add(g.grad, at));
        const range = add(rb, op('i32.shl', row, 3));
        // kr: the row of the first visible key, at this kv head.
        f.set(kr, add(add(c.k, kb), op('i32.mul', load('i32.load', range), c.kvRowBytes)));
        f.set(count, op('i32.sub', load('i32.load', range, 4), load('i32.load', range)));
        f.if(
          op('i32.le_s', count, 0),
          () => f.for(d, 0, rowBytes, 16, () => f.storeV128(add(oi, d), v128Zero)),
          () => {
            f.set(countBytes, op('i32.shl', count, 2));
            f.set(padBytes, op('i32.and', add(countBytes, 15), -16));
            // The gradient row after the weights row and its padding vector.
            f.set(ds, add(weights, add(padBytes, 16)));
            dots(qi, kr, weights, true);
            if (g) dots(gi, add(kr, vMinusK), ds, false);
            softmax();
            weightedSum();
            if (g) keyGradients(g);
          },
        );
      });
    });
  });
}

const COMMON_SIZES = i32('ranges', 'p0', 'p1', 't0', 't1', 'hkv', 'group', 't', 'hd');
const COMMON_STRIDES = i32('kvBatchBytes', 'qRowBytes', 'kvRowBytes');

/**
 * `attend_rows_f32`: attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] into out [B, T, H, hd] for the
 * (batch row, kv head) pairs [p0, p1) and query rows [t0, t1), query by query (`emitRows`). Parameters: byte
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
 * (like q), dk and dv (like k; zeroed by the caller) for the pairs [p0, p1) (`emitRows`; the rows [t0, t1) of a
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
