import {
  type Expr,
  type Local,
  load,
  mulAdd,
  type Operand,
  relaxedSimd,
  scalar,
  simd,
  simdLoad,
  v128Zero,
  wordDot,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { ValType } from './opcodes';
import {
  kQuantXForm,
  OUTPUT_TILE,
  superBlockDotKernel,
  wordPair,
  wordSplat,
  X_BYTE_SUMS,
} from './super-block-dot';

const V = ValType.v128;

/**
 * Bytes of a Q6_K super-block's codes (see QuantizedWeight): 16 int8 scales, 128 bytes of low nibbles, 64 bytes of
 * high bit pairs.
 */
export const Q6K_BLOCK_BYTES = 208;
/** Where the low nibbles and the high bit pairs start within a block. */
const LOW_BYTES = 16;
const HIGH_BYTES = 144;

/**
 * `v` shifted left by `by` bits (right for a negative `by`) in 16-bit lanes, which x86 shifts natively (byte shifts
 * take several instructions): bits crossing into the other byte of a lane lie outside the masks the callers apply.
 */
function shift(v: Operand, by: number): Operand {
  if (by === 0) return v;
  return by > 0 ? simd('i16x8.shl', v, by) : simd('i16x8.shr_u', v, -by);
}

/**
 * The 6-bit codes, as i8x16, of 16 consecutive values of group k (values 32k + l of a half): the low nibble from
 * `low` (bits 0-3 of each byte for k < 2, bits 4-7 else), the high pair from bits 2k, 2k + 1 of `high`; minus 32
 * (signed) unless `unsigned`.
 */
export function q6kCodes(low: Local, high: Local, k: number, masks: Masks, unsigned: boolean): Expr {
  const nibble = simd('v128.and', shift(low, k < 2 ? 0 : -4), masks.low);
  const pair = simd('v128.and', shift(high, 4 - 2 * k), masks.high);
  const bits = simd('v128.or', nibble, pair);
  return unsigned ? bits : simd('i8x16.sub', bits, masks.offset);
}

/** The i8x16 constants `q6kCodes` reads: 15 (a nibble), 48 (a high pair at bits 4-5) and the offset 32. */
interface Masks {
  readonly low: Local;
  readonly high: Local;
  readonly offset: Local;
}

/** The masks of `q6kCodes`, as locals `f` sets once at its entry. */
export function q6kMasks(f: FunctionBuilder): Masks {
  return {
    low: f.constantBytes(15),
    high: f.constantBytes(48),
    offset: f.constantBytes(32),
  };
}

/**
 * `q6k_dot`: out[r, j] = sum_b dx[r, b] · d[j, b] · sum_s s[j, b, s] · (qx · (q − 32))[s] for x quantized per
 * super-block of 256 to int8 codes qx (held widened to i16, in order), as llama.cpp's Q8_K,
 * against Q6_K blocks read directly (see QuantizedWeight): each sub-block of 16 values comes out of 16 low bytes and
 * 16 high bytes by 16-bit shifts and byte masks, widened to i16; its integer dot product runs in i32x4.dot_i16x8_s, the
 * two of a group are narrowed to i16 (each lane at most 4 · 32 · 127 in size: exact) and scaled by their int8 scales
 * in one more, and the super-block is scaled once in f32 (the loops and parameters: superBlockDotKernel; scales
 * holds d per super-block). With relaxed SIMD (kQuantXForm `i8`, with the sums of each 16 codes of x) the unsigned
 * codes q meet x's bytes in one byte dot product per 16 values, without widening (each lane then at most 4 · 63 ·
 * 127: the narrowing stays exact), and the offset 32 · sum_s s · Σqx[s] is taken off once per super-block. In the
 * i16 form of the byte dot product (ByteDot), each sub-block's sums meet its scale at once instead.
 */
export const Q6K_DOT = superBlockDotKernel('q6k_dot', {
  blockBytes: Q6K_BLOCK_BYTES,
  scaleBytes: 4,
  prepare(f, features) {
    const relaxed = kQuantXForm(features) === 'i8';
    // Few v128 locals (x is read from memory, the scales from their bytes): more than x86's 16 registers spill.
    const isum = f.locals(V, OUTPUT_TILE);
    const scaleBytes = f.locals(V, OUTPUT_TILE);
    const [low, high, code, half0] = f.locals(V, 4);
    const masks = q6kMasks(f);
    return ({ outputs, rows, scales, acc, xp, dx }) => {
      for (let t = 0; t < outputs; t++) {
        f.set(isum[t], v128Zero);
        f.set(scaleBytes[t], simdLoad('v128.load', rows[t])); // s_0..s_15
      }
      for (let g = 0; g < 8; g++) {
        const [h, k] = [g >> 2, g & 3];
        for (let t = 0; t < outputs; t++) {
          // Sub-blocks j = 8h + 2k and j + 1, one a part: scale bytes j and j + 1 among these, widened to i16.
          const words = simd(
            h === 0 ? 'i16x8.extend_low_i8x16_s' : 'i16x8.extend_high_i8x16_s',
            scaleBytes[t],
          );
          const dots: Expr[] = [];
          for (let part = 0; part < 2; part++) {
            f.set(low, simdLoad('v128.load', rows[t], LOW_BYTES + 64 * h + 32 * (k & 1) + 16 * part));
            f.set(high, simdLoad('v128.load', rows[t], HIGH_BYTES + 32 * h + 16 * part));
            f.set(code, q6kCodes(low, high, k, masks, relaxed));
            if (features.byteDot === 'i16') {
              // Each i16 lane at most 2 · 128 · 63 in size: exact; the sub-block's scale widens it to i32.
              const x = simdLoad('v128.load', xp, 32 * g + 16 * part);
              const scaled = simd('i32x4.dot_i16x8_s', wordDot(x, code), wordSplat(words, 2 * k + part));
              f.set(isum[t], simd('i32x4.add', isum[t], scaled));
              continue;
            }
            if (relaxed) {
              // Signed x bytes against the unsigned 6-bit codes (0..63: exact on every engine).
              const x = simdLoad('v128.load', xp, 32 * g + 16 * part);
              dots.push(relaxedSimd('i32x4.relaxed_dot_i8x16_i7x16_add_s', x, code, v128Zero));
            } else {
              const x = (q: number) => simdLoad('v128.load', xp, 64 * g + 32 * part + 16 * q);
              const first = simd('i32x4.dot_i16x8_s', simd('i16x8.extend_low_i8x16_s', code), x(0));
              const second = simd('i32x4.dot_i16x8_s', simd('i16x8.extend_high_i8x16_s', code), x(1));
              dots.push(simd('i32x4.add', first, second));
            }
            if (part === 0) f.set(half0, dots[0]);
          }
          if (features.byteDot === 'i16') continue;
          // The pair's sums narrowed to one i16x8 and scaled by [s_j four times, s_j+1 four times].
          const pairScales = wordPair(words, 2 * k);
          const pair = simd('i16x8.narrow_i32x4_s', half0, dots[1]);
          f.set(isum[t], simd('i32x4.add', isum[t], simd('i32x4.dot_i16x8_s', pair, pairScales)));
        }
      }
      for (let t = 0; t < outputs; t++) {
        if (relaxed) {
          // The codes' offset: isum -= 32 · sum_j s_j · (sum of x's codes of sub-block j).
          const sums = (half: number) => simdLoad('v128.load', xp, X_BYTE_SUMS + 16 * half);
          const low = simd('i32x4.dot_i16x8_s', simd('i16x8.extend_low_i8x16_s', scaleBytes[t]), sums(0));
          const high = simd('i32x4.dot_i16x8_s', simd('i16x8.extend_high_i8x16_s', scaleBytes[t]), sums(1));
          f.set(isum[t], simd('i32x4.sub', isum[t], simd('i32x4.shl', simd('i32x4.add', low, high), 5)));
        }
        const d = simd('f32x4.splat', scalar.fmul(load('f32.load', scales[t]), dx));
        f.set(acc[t], mulAdd(features, simd('f32x4.convert_i32x4_s', isum[t]), d, acc[t]));
      }
    };
  },
});
