import type { HalfType } from '@loom/tensor';
import {
  type Expr,
  laneMax,
  laneSum,
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

const { add, sub, mul, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/**
 * Rows of W a pass reads at once, each from its own part of W (rows j, j + n / 4, ...), sharing each 8 values of x
 * loaded: a core streams memory faster with several distant sequential reads in flight (see gemv_t). One accumulator
 * a row. Six rows ran slower, their loop's values past x64's 16 vector registers: [1, 768] x [2048, 768]ᵀ from memory,
 * one thread, 6 rows against 4: Node 20 bf16 15.0-16.5 against 19.0-20.2 GB/s, f16 13.8-16.0 against 20.2-20.6;
 * Node 26 bf16 14.2-18.8 against 18.2-21.3, f16 12.2-15.5 against 19.1-21.7 (f32's gemv_t: 18-24).
 */
const HALF_STREAMS = 4;

/** Values per step of the inner loop: one v128 of packed weights (4 words, 8 halves). */
export const HALF_STEP = 8;

/** float32's exponent bias less binary16's: a binary16 pattern placed as float32 bits reads as its value · 2^-112. */
const F16_REBIAS = 112;

/**
 * The even-indexed and odd-indexed values of 4 packed words (8 halves; `words` a local) as two f32x4 of float32 bits:
 * bfloat16's values (the top half of a float32: the even, low, half shifted up, the odd one with the low bits
 * cleared); binary16's values · 2^-112. A binary16 half puts its sign at bit 31 (the even half shifted up first),
 * then an arithmetic shift by 3 lines its exponent and fraction up with float32's, and the copies of the sign it
 * leaves in bits 28-30 (and the other half's bits below 13) are masked off: exact for every finite value, subnormals
 * and both zeros included (WebAssembly keeps subnormals).
 */
function halfBits(f: FunctionBuilder, type: HalfType, words: Operand): [even: Expr, odd: Expr] {
  if (type === 'bf16') {
    return [simd('i32x4.shl', words, 16), simd('v128.andnot', words, f.constantBits(0x0000ffff))];
  }
  const signAndMagnitude = f.constantBits(0x8fffe000);
  const place = (half: Operand) => simd('v128.and', simd('i32x4.shr_s', half, 3), signAndMagnitude);
  return [place(simd('i32x4.shl', words, 16)), place(words)];
}

/** The even-indexed and odd-indexed values of 4 packed words as two f32x4, exactly (halfBits, binary16's · 2^112). */
export function widenHalves(f: FunctionBuilder, type: HalfType, words: Operand): [even: Expr, odd: Expr] {
  const [even, odd] = halfBits(f, type, words);
  if (type === 'bf16') return [even, odd];
  const rebias = f.constant(2 ** F16_REBIAS);
  return [simd('f32x4.mul', even, rebias), simd('f32x4.mul', odd, rebias)];
}

/** Bytes of the calling thread's work area a dot kernel takes for m rows of k values of x (see halfDotKernel). */
export function halfDotWorkBytes(m: number, k: number): number {
  return 4 * m * (k + 1);
}

/** The f32 2^e, for an exponent e in [-126, 127] (an i32 operand), from its bits. */
function powerOfTwo(e: Operand): Expr {
  return op('f32.reinterpret_i32', op('i32.shl', add(e, 127), 23));
}

/**
 * A kernel out[r, j] = sum_i x[r, i] · w[j, i] for a 16-bit weight w [n, k] packed two values per word (see
 * HalfWeight), 8 values per step widened in registers. Each row of x is first split into its even and odd values in
 * the work area (halfDotWorkBytes), so each step of W meets them without shuffles. binary16 weights are read as
 * halfBits gives them, their value · 2^-112 (a multiply a vector fewer than widening), against x · 2^(112 − t): with
 * t = 0 every product and sum is the float32 the widened weight would give, and t = 0 unless the row holds a magnitude
 * of 2^16 or more, then t = its exponent − 15 (no scaled value overflows; products below 2^(t − 126) lose bits); each
 * sum is taken · 2^t. HALF_STREAMS outputs
 * n / HALF_STREAMS apart share each step of x (then the last n mod HALF_STREAMS one at a time), for every row of x in
 * turn.
 * Parameters: m rows, n outputs, k values per row (a multiple of 8); pointers and `oStep` (out's row stride) in bytes.
 */
function halfDotKernel<const N extends string>(name: N, type: HalfType) {
  return kernel({
    name,
    params: i32('m', 'n', 'k', 'x', 'w', 'out', 'oStep'),
    emit(f, { m, n, k, x, w, out, oStep, work }, { features }) {
      const [j, r, i, wRow, xq, xw, part, factors, shift] = f.locals(I, 9);
      const row = f.locals(I, HALF_STREAMS);
      const acc = f.locals(V, HALF_STREAMS);
      const [xLow, xHigh, xEven, xOdd, words, scale, largest] = f.locals(V, 7);
      const sum = f.local(F);
      f.set(wRow, mul(k, 2)); // bytes per packed row
      f.set(part, op('i32.div_u', n, HALF_STREAMS));
      f.set(factors, add(work, mul(mul(m, k), 4)));

      // Each row of x into the work area: its values 8 at a time as [4 even, 4 odd], binary16's scaled.
      f.set(xq, x);
      f.set(xw, work);
      f.for(r, 0, m, 1, () => {
        if (type === 'f16') {
          f.set(largest, v128Zero);
          f.for(i, 0, k, 4, () => {
            const values = simdLoad('v128.load', add(xq, mul(i, 4)));
            f.set(largest, simd('f32x4.max', largest, simd('f32x4.abs', values)));
          });
          f.set(sum, laneMax(largest));
          // t = max(0, exponent of max |x| − 15); NaN and infinity give 113.
          const exponentField = op('i32.and', op('i32.shr_u', op('i32.reinterpret_f32', sum), 23), 0xff);
          f.set(shift, sub(exponentField, 127 + 15));
          f.set(shift, op('select', shift, 0, op('i32.gt_s', shift, 0)));
          f.set(scale, simd('f32x4.splat', powerOfTwo(sub(F16_REBIAS, shift))));
          f.store('f32.store', add(factors, mul(r, 4)), powerOfTwo(shift));
        }
        f.for(i, 0, k, HALF_STEP, () => {
          f.set(xLow, simdLoad('v128.load', xq));
          f.set(xHigh, simdLoad('v128.load', xq, 16));
          const [even, odd] = [shuffle32(xLow, xHigh, [0, 2, 4, 6]), shuffle32(xLow, xHigh, [1, 3, 5, 7])];
          f.storeV128(xw, type === 'f16' ? simd('f32x4.mul', even, scale) : even);
          f.storeV128(xw, type === 'f16' ? simd('f32x4.mul', odd, scale) : odd, 16);
          f.set(xq, add(xq, 4 * HALF_STEP));
          f.set(xw, add(xw, 4 * HALF_STEP));
        });
      });

      /** Output s of a pass: j + s · part. */
      const output = (s: number) => (s === 0 ? j : add(j, mul(s, part)));
      /** Outputs j, j + part, ... (`count` of them) against row r of x. */
      const dots = (count: number) => {
        for (let s = 0; s < count; s++) {
          f.set(acc[s], v128Zero);
          f.set(row[s], add(w, mul(output(s), wRow)));
        }
        f.set(xw, add(work, mul(r, mul(k, 4))));
        f.for(i, 0, k, HALF_STEP, () => {
          f.set(xEven, simdLoad('v128.load', xw));
          f.set(xOdd, simdLoad('v128.load', xw, 16));
          for (let s = 0; s < count; s++) {
            f.set(words, simdLoad('v128.load', row[s]));
            const [even, odd] = halfBits(f, type, words);
            f.set(acc[s], mulAdd(features, odd, xOdd, mulAdd(features, even, xEven, acc[s])));
            f.set(row[s], add(row[s], 2 * HALF_STEP));
          }
          f.set(xw, add(xw, 4 * HALF_STEP));
        });
        for (let s = 0; s < count; s++) {
          f.set(sum, laneSum(acc[s]));
          if (type === 'f16') f.set(sum, fmul(sum, load('f32.load', add(factors, mul(r, 4)))));
          f.store('f32.store', add(out, add(mul(r, oStep), mul(output(s), 4))), sum);
        }
      };

      f.for(j, 0, part, 1, () => {
        f.for(r, 0, m, 1, () => dots(HALF_STREAMS));
      });
      f.for(j, mul(part, HALF_STREAMS), n, 1, () => {
        f.for(r, 0, m, 1, () => dots(1));
      });
    },
  });
}

/** `bf16_dot`: x times a bfloat16 weight (see halfDotKernel). */
export const BF16_DOT = halfDotKernel('bf16_dot', 'bf16');
/** `f16_dot`: x times a binary16 weight (see halfDotKernel). */
export const F16_DOT = halfDotKernel('f16_dot', 'f16');
