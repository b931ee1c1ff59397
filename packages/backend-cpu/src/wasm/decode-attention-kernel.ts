import {
  f32 as f32Const,
  f32x4,
  type Local,
  lane,
  mulAdd,
  op,
  scalar,
  shuffle32,
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

/**
 * Vector accumulators per pass over the head dimension (4 vectors, 16 elements, 64 bytes), and
 * keys per step of the scores.
 */
const LANES = 4;
const BLOCK_BYTES = 16 * LANES;

/** The sum of the four f32 lanes of `v`. */
function laneSum(v: Local) {
  const at = (i: number) => lane('f32x4.extract_lane', v, i);
  return op('f32.add', op('f32.add', at(0), at(1)), op('f32.add', at(2), at(3)));
}

/**
 * Runs `body(vectors)` over the bytes [0, rowBytes) of a row: blocks of LANES vectors while a
 * whole block fits, then single vectors; `offset` holds the byte offset of the current piece.
 */
function overRow(
  f: FunctionBuilder,
  offset: Local,
  blockEnd: Local,
  rowBytes: Local,
  body: (vectors: number) => void,
): void {
  f.for(offset, 0, blockEnd, BLOCK_BYTES, () => body(LANES));
  f.for(offset, blockEnd, rowBytes, 16, () => body(1));
}

/**
 * `attend_one_f32`: attention of one query per head over `count` consecutive keys, for query heads
 * [h0, h1) of one batch row: q and out [H, hd], k and v rows `kvRowBytes` apart (the first visible
 * key at k and v, kv head g at byte g · hd · 4 of a row), head h reading kv head h / group.
 * First one load per cache line of those heads' key and value rows, in address order, so the cache streams
 * them in (stories110M shape, 228 keys on average: 2.53-2.65 -> 2.11-2.12 ms of attention a token on one
 * thread, 1.84-2.04 -> 1.48-1.51 on two, Node 20). Then per head: scores[j] = scale · q · k_j into `scores`
 * ([H, count]), four keys at a time (their sums transposed into one vector), their softmax by the vector exp
 * (shifted by the maximum, so -Infinity scores weigh 0), then out = Σ_j p_j v_j, accumulated over
 * the keys in registers, 16 elements of the head at a time. hd must be a multiple of 4, count ≥ 1.
 * Parameters: byte addresses, then sizes in elements (kvRowBytes in bytes), then the f32 scale.
 */
export const ATTEND_ONE = kernel({
  name: 'attend_one_f32',
  params: [
    ...i32('q', 'k', 'v', 'out', 'scores', 'h0', 'h1', 'group', 'count', 'hd', 'kvRowBytes'),
    ...f32('scale'),
  ],
  emit(f, { q, k, v, out, scores, h0, h1, group, count, hd, kvRowBytes, scale }, { features }) {
    const [h, j, d, rowBytes, blockEnd, qh, row, sc, oh, countVec, countBytes] = f.locals(I, 11);
    const acc = f.locals(V, LANES);
    const [m, z, e, total, weight] = f.locals(V, 5);
    const [score, max, sum] = f.locals(F, 3);
    const rows = f.locals(I, LANES - 1);
    const scaleVector = f.local(V);
    f.set(scaleVector, simd('f32x4.splat', scale));
    f.set(rowBytes, op('i32.shl', hd, 2));
    f.set(blockEnd, op('i32.and', rowBytes, -BLOCK_BYTES));
    f.set(countBytes, op('i32.shl', count, 2));
    f.set(countVec, op('i32.and', countBytes, -16));
    const kvHeadBytes = op('i32.mul', op('i32.div_u', h, group), rowBytes);
    const clear = (vectors: number) => {
      for (let u = 0; u < vectors; u++) f.set(acc[u], v128Zero);
    };
    // Every key and value row of these heads' kv heads, one load a cache line, in address order: the passes
    // below read them a head (and a 64-byte piece) at a time, rows kvRowBytes apart, which streams badly.
    const [lo, hi, touch] = f.locals(I, 3);
    const touched = f.local(V);
    f.set(lo, op('i32.mul', op('i32.div_u', h0, group), rowBytes));
    f.set(hi, op('i32.mul', add(op('i32.div_u', op('i32.sub', h1, 1), group), 1), rowBytes));
    f.set(row, 0);
    f.for(j, 0, count, 1, () => {
      f.for(touch, lo, hi, 64, () => {
        f.set(touched, simd('v128.or', touched, simdLoad('v128.load', add(add(k, row), touch))));
        f.set(touched, simd('v128.or', touched, simdLoad('v128.load', add(add(v, row), touch))));
      });
      f.set(row, add(row, kvRowBytes));
    });
    f.for(h, h0, h1, 1, () => {
      f.set(qh, add(q, op('i32.mul', h, rowBytes)));
      f.set(oh, add(out, op('i32.mul', h, rowBytes)));
      f.set(sc, add(scores, op('i32.mul', h, countBytes)));
      // Scores and their maximum: four keys at a time (a load of q serves four rows of k), then one by one.
      f.set(row, add(k, kvHeadBytes));
      f.set(m, f32x4(Number.NEGATIVE_INFINITY));
      f.for(j, 0, countVec, 16, () => {
        for (let r = 1; r < LANES; r++) f.set(rows[r - 1], add(row, op('i32.mul', kvRowBytes, r)));
        const keyRow = (r: number) => (r === 0 ? row : rows[r - 1]);
        clear(LANES);
        f.for(d, 0, rowBytes, 16, () => {
          f.set(e, simdLoad('v128.load', add(qh, d)));
          for (let r = 0; r < LANES; r++) {
            f.set(acc[r], mulAdd(features, e, simdLoad('v128.load', add(keyRow(r), d)), acc[r]));
          }
        });
        // Transposed sums: lane r of the result is the dot product of key r.
        f.set(
          z,
          simd('f32x4.add', shuffle32(acc[0], acc[1], [0, 4, 1, 5]), shuffle32(acc[0], acc[1], [2, 6, 3, 7])),
        );
        f.set(
          e,
          simd('f32x4.add', shuffle32(acc[2], acc[3], [0, 4, 1, 5]), shuffle32(acc[2], acc[3], [2, 6, 3, 7])),
        );
        f.set(
          z,
          mul(simd('f32x4.add', shuffle32(z, e, [0, 1, 4, 5]), shuffle32(z, e, [2, 3, 6, 7])), scaleVector),
        );
        f.storeV128(add(sc, j), z);
        f.set(m, simd('f32x4.max', m, z));
        f.set(row, add(row, op('i32.shl', kvRowBytes, 2)));
      });
      f.set(
        max,
        op(
          'f32.max',
          op('f32.max', lane('f32x4.extract_lane', m, 0), lane('f32x4.extract_lane', m, 1)),
          op('f32.max', lane('f32x4.extract_lane', m, 2), lane('f32x4.extract_lane', m, 3)),
        ),
      );
      f.for(j, countVec, countBytes, 4, () => {
        clear(LANES);
        overRow(f, d, blockEnd, rowBytes, (vectors) => {
          for (let u = 0; u < vectors; u++) {
            const at = add(d, 16 * u);
            f.set(
              acc[u],
              mulAdd(
                features,
                simdLoad('v128.load', add(qh, at)),
                simdLoad('v128.load', add(row, at)),
                acc[u],
              ),
            );
          }
        });
        f.set(
          acc[0],
          simd('f32x4.add', simd('f32x4.add', acc[0], acc[1]), simd('f32x4.add', acc[2], acc[3])),
        );
        f.set(score, op('f32.mul', laneSum(acc[0]), scale));
        f.store('f32.store', add(sc, j), score);
        f.set(max, op('f32.max', max, score));
        f.set(row, add(row, kvRowBytes));
      });
      // Weights e^(score - max) in place, and their sum.
      f.set(m, simd('f32x4.splat', max));
      f.set(total, v128Zero);
      f.for(j, 0, countVec, 16, () => {
        f.set(z, sub(simdLoad('v128.load', add(sc, j)), m));
        emitExp(f, z, weight, e);
        f.storeV128(add(sc, j), e);
        f.set(total, simd('f32x4.add', total, e));
      });
      f.set(sum, laneSum(total));
      f.for(j, countVec, countBytes, 4, () => {
        f.set(z, sub(simdLoad('v128.load32_splat', add(sc, j)), m));
        emitExp(f, z, weight, e);
        f.store('f32.store', add(sc, j), lane('f32x4.extract_lane', e, 0));
        f.set(sum, op('f32.add', sum, lane('f32x4.extract_lane', e, 0)));
      });
      // out = Σ_j weight_j v_j / sum, one piece of the head at a time.
      f.set(m, simd('f32x4.splat', op('f32.div', f32Const(1), sum)));
      overRow(f, d, blockEnd, rowBytes, (vectors) => {
        clear(vectors);
        f.set(row, add(add(v, kvHeadBytes), d));
        f.for(j, 0, countBytes, 4, () => {
          f.set(weight, simdLoad('v128.load32_splat', add(sc, j)));
          for (let u = 0; u < vectors; u++) {
            f.set(acc[u], mulAdd(features, weight, simdLoad('v128.load', row, 16 * u), acc[u]));
          }
          f.set(row, add(row, kvRowBytes));
        });
        for (let u = 0; u < vectors; u++) f.storeV128(add(oh, d), mul(acc[u], m), 16 * u);
      });
    });
  },
});
