import {
  f32 as f32Const,
  f32x4,
  type Local,
  lane,
  laneMax,
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
import { BLOCK_BYTES, LANES, overRow } from './head-row';
import { f32, i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { emitExp, mul, sub } from './vector-exp';

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;
const { add } = scalar;

/**
 * Keys per chunk of the passes over the cache (a multiple of 4): each chunk's key (then value) rows are touched in
 * address order and then read by every head while they are still in L2. One touch of the whole range stopped paying
 * once a layer's keys and values outgrew L2: stories110M shape, 830 keys, one thread, Node 20: 10.4-10.9 ms of
 * attention a token.
 */
const CHUNK_KEYS = 128;
/**
 * Parts of a chunk touched at once (row j of each), so the touch reads TOUCH_PARTS sequential streams: 830 keys as
 * above, 6.3 -> 5.75 ms.
 */
const TOUCH_PARTS = 4;

/**
 * `attend_one_f32`: attention of one query per head over `count` consecutive keys, for query heads
 * [h0, h1) of one batch row: q and out [H, hd], k and v rows `kvRowBytes` apart (the first visible
 * key at k and v, kv head g at byte g · hd · 4 of a row), head h reading kv head h / group.
 * The keys go in chunks of CHUNK_KEYS: first one load per cache line of the chunk's key rows (those heads' part),
 * in address order, so the cache streams them in (reading a head at a time, rows kvRowBytes apart, streams badly;
 * stories110M shape, 228 keys on average: 2.53-2.65 -> 2.11-2.12 ms of attention a token on one thread), then each
 * head's scores of the chunk: scores[j] = scale · q · k_j into `scores` (head h at h · (count + 1) values), four keys
 * at a time (their sums transposed into one vector). Then per head the softmax by the vector exp (shifted by the
 * maximum, so -Infinity scores weigh 0), its weights in place and 1 / their sum after them. Then the chunks of value
 * rows the same way, out += Σ_j p_j v_j for the chunk's keys (16 elements of the head at a time in registers, out
 * zeroed first), and last out times 1 / the sum. Each sum keeps the order of one pass over all keys. hd must be a
 * multiple of 4, count ≥ 1. Parameters: byte addresses, then sizes in elements (kvRowBytes in bytes), then the f32
 * scale.
 */
export const ATTEND_ONE = kernel({
  name: 'attend_one_f32',
  params: [
    ...i32('q', 'k', 'v', 'out', 'scores', 'h0', 'h1', 'group', 'count', 'hd', 'kvRowBytes'),
    ...f32('scale'),
  ],
  emit(f, { q, k, v, out, scores, h0, h1, group, count, hd, kvRowBytes, scale }, { features }) {
    const [h, j, d, rowBytes, blockEnd, qh, row, sc, oh, countVec, countBytes, headScores] = f.locals(I, 12);
    const [c0, c1, lo, hi, touch, part, partBytes] = f.locals(I, 7);
    const acc = f.locals(V, LANES);
    const [m, z, e, total, weight, touched] = f.locals(V, 6);
    const [score, max, sum] = f.locals(F, 3);
    const rows = f.locals(I, LANES - 1);
    const scaleVector = f.local(V);
    f.set(scaleVector, simd('f32x4.splat', scale));
    f.set(rowBytes, op('i32.shl', hd, 2));
    f.set(blockEnd, op('i32.and', rowBytes, -BLOCK_BYTES));
    f.set(countBytes, op('i32.shl', count, 2));
    f.set(countVec, op('i32.and', countBytes, -16));
    f.set(headScores, add(countBytes, 4));
    const kvHeadBytes = op('i32.mul', op('i32.div_u', h, group), rowBytes);
    const clear = (vectors: number) => {
      for (let u = 0; u < vectors; u++) f.set(acc[u], v128Zero);
    };
    const headPointers = () => {
      f.set(qh, add(q, op('i32.mul', h, rowBytes)));
      f.set(oh, add(out, op('i32.mul', h, rowBytes)));
      f.set(sc, add(scores, op('i32.mul', h, headScores)));
    };
    // The bytes of a row these heads' kv heads take.
    f.set(lo, op('i32.mul', op('i32.div_u', h0, group), rowBytes));
    f.set(hi, op('i32.mul', add(op('i32.div_u', op('i32.sub', h1, 1), group), 1), rowBytes));
    /**
     * `body()` for each chunk [c0, c1) of the keys, after one load a cache line of its rows at `base` (TOUCH_PARTS
     * parts at once, then the rows left over).
     */
    const chunks = (base: Local, body: () => void) => {
      f.for(c0, 0, count, CHUNK_KEYS, () => {
        f.set(c1, scalar.min(add(c0, CHUNK_KEYS), count));
        f.set(row, add(base, op('i32.mul', c0, kvRowBytes)));
        f.set(part, op('i32.div_u', op('i32.sub', c1, c0), TOUCH_PARTS));
        f.set(partBytes, op('i32.mul', part, kvRowBytes));
        const touchRows = (parts: number) => {
          f.for(touch, lo, hi, 64, () => {
            for (let p = 0; p < parts; p++) {
              const at = p === 0 ? row : add(row, op('i32.mul', partBytes, p));
              f.set(touched, simd('v128.or', touched, simdLoad('v128.load', add(at, touch))));
            }
          });
          f.set(row, add(row, kvRowBytes));
        };
        f.for(j, 0, part, 1, () => touchRows(TOUCH_PARTS));
        f.set(row, add(base, op('i32.mul', add(c0, op('i32.mul', part, TOUCH_PARTS)), kvRowBytes)));
        f.for(j, add(c0, op('i32.mul', part, TOUCH_PARTS)), c1, 1, () => touchRows(1));
        body();
      });
    };

    // Scores: four keys at a time (a load of q serves four rows of k), then the last count mod 4 one by one.
    chunks(k, () => {
      f.for(h, h0, h1, 1, () => {
        headPointers();
        f.set(row, add(add(k, kvHeadBytes), op('i32.mul', c0, kvRowBytes)));
        f.for(j, op('i32.shl', c0, 2), scalar.min(op('i32.shl', c1, 2), countVec), 16, () => {
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
          f.set(z, pairSums(acc[0], acc[1]));
          f.set(e, pairSums(acc[2], acc[3]));
          f.set(z, mul(laneSums4(z, e), scaleVector));
          f.storeV128(add(sc, j), z);
          f.set(row, add(row, op('i32.shl', kvRowBytes, 2)));
        });
        // Only the last chunk has keys past countVec.
        f.for(j, j, op('i32.shl', c1, 2), 4, () => {
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
          f.set(row, add(row, kvRowBytes));
        });
      });
    });

    // Per head: the maximum, the weights e^(score - max) in place, 1 / their sum after them; out zeroed.
    f.for(h, h0, h1, 1, () => {
      headPointers();
      f.set(m, f32x4(Number.NEGATIVE_INFINITY));
      f.for(j, 0, countVec, 16, () => f.set(m, simd('f32x4.max', m, simdLoad('v128.load', add(sc, j)))));
      f.set(max, laneMax(m));
      f.for(j, countVec, countBytes, 4, () => f.set(max, op('f32.max', max, load('f32.load', add(sc, j)))));
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
      f.store('f32.store', add(sc, countBytes), op('f32.div', f32Const(1), sum));
      f.for(d, 0, rowBytes, 16, () => f.storeV128(add(oh, d), v128Zero));
    });

    // out += Σ_j weight_j v_j over each chunk's keys, one piece of the head at a time.
    chunks(v, () => {
      f.for(h, h0, h1, 1, () => {
        headPointers();
        overRow(f, d, blockEnd, rowBytes, (vectors) => {
          for (let u = 0; u < vectors; u++) f.set(acc[u], simdLoad('v128.load', add(oh, d), 16 * u));
          f.set(row, add(add(add(v, kvHeadBytes), d), op('i32.mul', c0, kvRowBytes)));
          f.for(j, op('i32.shl', c0, 2), op('i32.shl', c1, 2), 4, () => {
            f.set(weight, simdLoad('v128.load32_splat', add(sc, j)));
            for (let u = 0; u < vectors; u++) {
              f.set(acc[u], mulAdd(features, weight, simdLoad('v128.load', row, 16 * u), acc[u]));
            }
            f.set(row, add(row, kvRowBytes));
          });
          for (let u = 0; u < vectors; u++) f.storeV128(add(oh, d), acc[u], 16 * u);
        });
      });
    });

    // out times 1 / the sum.
    f.for(h, h0, h1, 1, () => {
      headPointers();
      f.set(m, simdLoad('v128.load32_splat', add(sc, countBytes)));
      f.for(d, 0, rowBytes, 16, () => f.storeV128(add(oh, d), mul(simdLoad('v128.load', add(oh, d)), m)));
    });
  },
});
