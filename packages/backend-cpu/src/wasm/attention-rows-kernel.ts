import {
  f32 as f32Const,
  type KernelFeatures,
  type Local,
  lane,
  laneSum,
  laneSums4,
  load,
  mulAdd,
  op,
  pairSums,
  scalar,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { emitExp, mul, sub } from './vector-exp';

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const { add } = scalar;

/** Vectors of a head row taken at once (16 elements, 64 bytes), and keys per step of the dot products. */
const LANES = 4;
const BLOCK_BYTES = 16 * LANES;

/**
 * `body(vectors)` over the bytes [0, rowBytes) of a head row: blocks of LANES vectors while a whole block fits
 * (before `blockEnd`), then single vectors; `offset` counts the bytes done.
 */
function overRow(
  f: FunctionBuilder,
  offset: Local,
  blockEnd: Local,
  rowBytes: Local,
  body: (vectors: number) => void,
) {
  f.for(offset, 0, blockEnd, BLOCK_BYTES, () => body(LANES));
  f.for(offset, blockEnd, rowBytes, 16, () => body(1));
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
  readonly qBatchBytes: Local;
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
 * 1. its scores s_j = scale q·k_j into the weights row (and for the backward dp_j = grad·v_j into the gradient
 *    row), four keys at a time, one load of q (and of grad) serving four rows of k (and of v), the sums transposed
 *    into one vector; the rows padded to whole vectors with -Infinity (and 0);
 * 2. the weights p_j = e^(s_j - max) / Σ e (and D = Σ p_j dp_j, ds_j = scale p_j (dp_j - D): softmax's backward
 *    with attention's scale folded in) over whole vectors;
 * 3. out = Σ_j p_j v_j (the backward: dq = Σ_j ds_j k_j), 16 elements of the head at a time in registers;
 * 4. the backward only: dk_j += ds_j q and dv_j += p_j grad, q's and grad's 16 elements in registers (dk and dv
 *    zeroed by the caller; a pair adds to its own kv head only, so pairs may run at once).
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
  const [rowBytes, blockEnd, count, countBytes, padBytes, qb, kb, rb, qi, gi, oi, kr, kj, ds] = f.locals(
    I,
    14,
  );
  const [qp, gp, dkr, dvr, vMinusK] = f.locals(I, 5);
  const keyRows = f.locals(I, LANES);
  const valueRows = f.locals(I, g ? LANES : 0);
  const acc = f.locals(V, 2 * LANES);
  const [a, b, m, e, z, kk] = f.locals(V, 6);
  const max = f.local(F);
  const scaleVector = f.local(V);
  f.set(scaleVector, simd('f32x4.splat', c.scale));
  f.set(rowBytes, op('i32.shl', c.hd, 2));
  f.set(blockEnd, op('i32.and', rowBytes, -BLOCK_BYTES));
  // v's rows lie where k's do, this many bytes on (and dk's, dv's).
  f.set(vMinusK, op('i32.sub', c.v, c.k));
  const weights = c.work;

  /** 1. Scores (and dp) of the visible keys into the rows, padded to whole vectors. */
  const scores = () => {
    f.set(kj, kr);
    f.for(j, 0, op('i32.and', countBytes, -16), 16, () => {
      for (let r = 0; r < LANES; r++)
        f.set(keyRows[r], r === 0 ? kj : add(kj, op('i32.mul', c.kvRowBytes, r)));
      for (let r = 0; r < valueRows.length; r++) f.set(valueRows[r], add(keyRows[r], vMinusK));
      f.set(qp, qi);
      if (g) f.set(gp, gi);
      for (let x = 0; x < (g ? 2 * LANES : LANES); x++) f.set(acc[x], v128Zero);
      overRow(f, d, blockEnd, rowBytes, (vectors) => {
        for (let u = 0; u < vectors; u++) {
          f.set(a, simdLoad('v128.load', qp, 16 * u));
          for (let r = 0; r < LANES; r++) {
            f.set(acc[r], mulAdd(features, a, simdLoad('v128.load', keyRows[r], 16 * u), acc[r]));
          }
          if (!g) continue;
          f.set(b, simdLoad('v128.load', gp, 16 * u));
          for (let r = 0; r < LANES; r++) {
            const value = simdLoad('v128.load', valueRows[r], 16 * u);
            f.set(acc[LANES + r], mulAdd(features, b, value, acc[LANES + r]));
          }
        }
        for (const p of [qp, ...keyRows, ...(g ? [gp, ...valueRows] : [])]) f.set(p, add(p, 16 * vectors));
      });
      // Transposed sums: lane r is key r's.
      f.set(a, pairSums(acc[0], acc[1]));
      f.set(b, pairSums(acc[2], acc[3]));
      f.storeV128(add(weights, j), mul(laneSums4(a, b), scaleVector));
      if (g) {
        f.set(a, pairSums(acc[4], acc[5]));
        f.set(b, pairSums(acc[6], acc[7]));
        f.storeV128(add(ds, j), laneSums4(a, b));
      }
      f.set(kj, add(kj, op('i32.shl', c.kvRowBytes, 2)));
    });
    // The last count mod 4 keys one at a time.
    f.for(j, j, countBytes, 4, () => {
      f.set(acc[0], v128Zero);
      f.set(acc[1], v128Zero);
      f.for(d, 0, rowBytes, 16, () => {
        const key = simdLoad('v128.load', add(kj, d));
        f.set(acc[0], mulAdd(features, simdLoad('v128.load', add(qi, d)), key, acc[0]));
        if (!g) return;
        const value = simdLoad('v128.load', add(add(kj, vMinusK), d));
        f.set(acc[1], mulAdd(features, simdLoad('v128.load', add(gi, d)), value, acc[1]));
      });
      f.store('f32.store', add(weights, j), op('f32.mul', laneSum(acc[0]), c.scale));
      if (g) f.store('f32.store', add(ds, j), laneSum(acc[1]));
      f.set(kj, add(kj, c.kvRowBytes));
    });
    // Padding: weight e^-Infinity = 0 (and dp 0) up to the next whole vector.
    f.storeV128(add(weights, countBytes), f.constant(Number.NEGATIVE_INFINITY));
    if (g) f.storeV128(add(ds, countBytes), v128Zero);
  };

  /** 2. The weights (and ds) over whole vectors. */
  const softmax = () => {
    f.set(m, f.constant(Number.NEGATIVE_INFINITY));
    f.for(j, 0, padBytes, 16, () => f.set(m, simd('f32x4.max', m, simdLoad('v128.load', add(weights, j)))));
    const lanes = [0, 1, 2, 3].map((i) => lane('f32x4.extract_lane', m, i));
    f.set(max, op('f32.max', op('f32.max', lanes[0], lanes[1]), op('f32.max', lanes[2], lanes[3])));
    f.set(m, simd('f32x4.splat', max));
    f.set(a, v128Zero);
    f.for(j, 0, padBytes, 16, () => {
      f.set(z, sub(simdLoad('v128.load', add(weights, j)), m));
      emitExp(f, z, kk, e);
      f.storeV128(add(weights, j), e);
      f.set(a, simd('f32x4.add', a, e));
    });
    // m = 1 / the sum; the weights normalised (and D = Σ p dp in a).
    f.set(m, simd('f32x4.splat', op('f32.div', f32Const(1), laneSum(a))));
    f.set(a, v128Zero);
    f.for(j, 0, padBytes, 16, () => {
      f.set(e, mul(simdLoad('v128.load', add(weights, j)), m));
      f.storeV128(add(weights, j), e);
      if (g) f.set(a, mulAdd(features, e, simdLoad('v128.load', add(ds, j)), a));
    });
    if (!g) return;
    f.set(m, simd('f32x4.splat', laneSum(a)));
    f.for(j, 0, padBytes, 16, () => {
      const p = simdLoad('v128.load', add(weights, j));
      f.storeV128(add(ds, j), mul(mul(p, sub(simdLoad('v128.load', add(ds, j)), m)), scaleVector));
    });
  };

  /** 3. out = Σ_j p_j v_j, or dq = Σ_j ds_j k_j. */
  const weightedSum = () => {
    const [factors, first] = g ? [ds, kr] : [weights, add(kr, vMinusK)];
    overRow(f, d, blockEnd, rowBytes, (vectors) => {
      for (let u = 0; u < vectors; u++) f.set(acc[u], v128Zero);
      f.set(kj, add(first, d));
      f.for(j, 0, countBytes, 4, () => {
        f.set(e, simdLoad('v128.load32_splat', add(factors, j)));
        for (let u = 0; u < vectors; u++) {
          f.set(acc[u], mulAdd(features, e, simdLoad('v128.load', kj, 16 * u), acc[u]));
        }
        f.set(kj, add(kj, c.kvRowBytes));
      });
      for (let u = 0; u < vectors; u++) f.storeV128(add(oi, d), acc[u], 16 * u);
    });
  };

  /** 4. dk_j += ds_j q and dv_j += p_j grad. */
  const keyGradients = (gr: Gradients) => {
    overRow(f, d, blockEnd, rowBytes, (vectors) => {
      for (let u = 0; u < vectors; u++) {
        f.set(acc[u], simdLoad('v128.load', add(qi, d), 16 * u));
        f.set(acc[LANES + u], simdLoad('v128.load', add(gi, d), 16 * u));
      }
      f.set(dkr, add(add(gr.dk, op('i32.sub', kr, c.k)), d));
      f.set(dvr, add(add(gr.dv, op('i32.sub', kr, c.k)), d));
      f.for(j, 0, countBytes, 4, () => {
        f.set(e, simdLoad('v128.load32_splat', add(ds, j)));
        f.set(z, simdLoad('v128.load32_splat', add(weights, j)));
        for (let u = 0; u < vectors; u++) {
          f.storeV128(dkr, mulAdd(features, e, acc[u], simdLoad('v128.load', dkr, 16 * u)), 16 * u);
          f.storeV128(dvr, mulAdd(features, z, acc[LANES + u], simdLoad('v128.load', dvr, 16 * u)), 16 * u);
        }
        f.set(dkr, add(dkr, c.kvRowBytes));
        f.set(dvr, add(dvr, c.kvRowBytes));
      });
    });
  };

  f.for(pair, c.p0, c.p1, 1, () => {
    f.set(batch, op('i32.div_u', pair, c.hkv));
    f.set(kvHead, op('i32.sub', pair, op('i32.mul', batch, c.hkv)));
    // Byte offsets of the pair's first query head in q (grad, out, dq) and of its kv head in k (v, dk, dv).
    f.set(
      qb,
      add(op('i32.mul', batch, c.qBatchBytes), op('i32.mul', op('i32.mul', kvHead, c.group), rowBytes)),
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
            scores();
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
const COMMON_STRIDES = i32('qBatchBytes', 'kvBatchBytes', 'qRowBytes', 'kvRowBytes');

/**
 * `attend_rows_f32`: attention of q [B, T, H, hd] over k and v [B, S, Hkv, hd] into out [B, T, H, hd] for the
 * (batch row, kv head) pairs [p0, p1) and query rows [t0, t1), query by query (`emitRows`). Parameters: byte
 * addresses, the ranges' address, pair and row ranges, sizes, strides in bytes (a batch row of q and of k, a row of each), then the f32 scale.
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
