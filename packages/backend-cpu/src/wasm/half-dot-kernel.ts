import type { HalfType } from '@loom/tensor';
import {
  type Expr,
  f32x4,
  type Local,
  laneSum,
  mulAdd,
  type Operand,
  op,
  scalar,
  shuffle32,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, mul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/**
 * Outputs that share each 8 values of x loaded, n / 4 rows of W apart, so W is read as 4 sequential streams (a bf16
 * stories110M-shaped set of weights, one row of x, Node 20: 29.3 -> 19.3 ms on one thread, 18.7 -> 12.0 on two, against
 * 4 adjacent rows); the remaining outputs run one at a time.
 */
const HALF_OUTPUT_TILE = 4;

/** Values per step of the inner loop: one v128 of packed weights (4 words, 8 halves). */
export const HALF_STEP = 8;

/** The 32-bit lane of a float32 sign, for v128.bitselect. */
const SIGN = 0x80000000 | 0;

/**
 * The even-indexed and odd-indexed values of 4 packed words (8 halves) as two f32x4. bfloat16 is the top half of a
 * float32: the even (low) half shifted up, the odd (high) half masked. binary16 moves its 15 magnitude bits into
 * place (exponent and fraction line up 13 bits lower than float32's), then · 2^112 rebiases the exponent — exact for
 * normal and subnormal values alike, since WebAssembly keeps subnormals — and takes its sign bit back.
 */
function widen(type: HalfType, words: Operand, k: WidenConstants): [even: Expr, odd: Expr] {
  if (type === 'bf16') return [simd('i32x4.shl', words, 16), simd('v128.and', words, k.highHalf)];
  const evenMagnitude = simd('i32x4.shl', simd('v128.and', words, k.lowMagnitude), 13);
  const oddMagnitude = simd('v128.and', simd('i32x4.shr_u', words, 3), k.oddMagnitude);
  return [
    simd('v128.bitselect', simd('i32x4.shl', words, 16), simd('f32x4.mul', evenMagnitude, k.rebias), k.sign),
    simd('v128.bitselect', words, simd('f32x4.mul', oddMagnitude, k.rebias), k.sign),
  ];
}

/** The vector constants `widen` reads, held in locals set once before the loops. */
interface WidenConstants {
  readonly highHalf: Local;
  readonly lowMagnitude: Local;
  readonly oddMagnitude: Local;
  readonly sign: Local;
  readonly rebias: Local;
}

/**
 * A kernel out[r, j] = sum_i x[r, i] · w[j, i] for a 16-bit weight w [n, k] packed two values per word (see
 * HalfWeight), widening 8 values per step in registers: x's 8 values are split once into even and odd lanes to match,
 * and shared by HALF_OUTPUT_TILE outputs n / HALF_OUTPUT_TILE apart (then the last n mod HALF_OUTPUT_TILE one at a
 * time), for every row of x in turn. Parameters: m rows, n outputs, k values per row (a multiple of 8); pointers and
 * `oStep` (out's row stride) in bytes.
 */
function halfDotKernel<const N extends string>(name: N, type: HalfType) {
  return kernel({
    name,
    params: i32('m', 'n', 'k', 'x', 'w', 'out', 'oStep'),
    emit(f, { m, n, k, x, w, out, oStep }, { features }) {
      const [j0, r, i, wRow, xp, wp, part, partBytes] = f.locals(I, 8);
      // Even and odd lanes accumulate apart: two independent chains of adds per output.
      const acc = f.locals(V, HALF_OUTPUT_TILE);
      const accOdd = f.locals(V, HALF_OUTPUT_TILE);
      const [xLow, xHigh, xEven, xOdd, words] = f.locals(V, 5);
      const [sum] = f.locals(F, 1);
      const [highHalf, lowMagnitude, oddMagnitude, sign, rebias] = f.locals(V, 5);
      f.set(highHalf, simd('i32x4.splat', 0xffff0000 | 0));
      f.set(lowMagnitude, simd('i32x4.splat', 0x7fff));
      f.set(oddMagnitude, simd('i32x4.splat', 0x0fffe000));
      f.set(sign, simd('i32x4.splat', SIGN));
      f.set(rebias, f32x4(2 ** 112));
      const constants = { highHalf, lowMagnitude, oddMagnitude, sign, rebias };
      f.set(wRow, mul(k, 2)); // bytes per packed row
      f.set(part, op('i32.div_u', n, HALF_OUTPUT_TILE));
      f.set(partBytes, mul(part, wRow));

      /** Outputs j0 .. j0 + outputs against row r of x. */
      const outputsAgainstRow = (outputs: number) => {
        for (let t = 0; t < outputs; t++) {
          f.set(acc[t], v128Zero);
          f.set(accOdd[t], v128Zero);
        }
        f.set(xp, add(x, mul(r, mul(k, 4))));
        f.set(wp, add(w, mul(j0, wRow)));
        f.for(i, 0, k, HALF_STEP, () => {
          f.set(xLow, simdLoad('v128.load', xp));
          f.set(xHigh, simdLoad('v128.load', xp, 16));
          f.set(xEven, shuffle32(xLow, xHigh, [0, 2, 4, 6]));
          f.set(xOdd, shuffle32(xLow, xHigh, [1, 3, 5, 7]));
          for (let t = 0; t < outputs; t++) {
            f.set(words, simdLoad('v128.load', t === 0 ? wp : add(wp, mul(t, partBytes))));
            const [even, odd] = widen(type, words, constants);
            f.set(acc[t], mulAdd(features, even, xEven, acc[t]));
            f.set(accOdd[t], mulAdd(features, odd, xOdd, accOdd[t]));
          }
          f.set(xp, add(xp, 4 * HALF_STEP));
          f.set(wp, add(wp, 2 * HALF_STEP));
        });
        for (let t = 0; t < outputs; t++) {
          f.set(acc[t], simd('f32x4.add', acc[t], accOdd[t]));
          const v = acc[t];
          f.set(sum, laneSum(v));
          f.store('f32.store', add(out, add(mul(r, oStep), mul(add(j0, mul(t, part)), 4))), sum);
        }
      };

      f.for(j0, 0, part, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(HALF_OUTPUT_TILE));
      });
      f.for(j0, mul(part, HALF_OUTPUT_TILE), n, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(1));
      });
    },
  });
}

/** `bf16_dot`: x times a bfloat16 weight (see halfDotKernel). */
export const BF16_DOT = halfDotKernel('bf16_dot', 'bf16');
/** `f16_dot`: x times a binary16 weight (see halfDotKernel). */
export const F16_DOT = halfDotKernel('f16_dot', 'f16');
