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
  X_SUMS,
} from './super-block-dot';

const V = ValType.v128;

/** Bytes of a Q4_K super-block's codes (see QuantizedWeight): 8 scales, 8 mins, then 128 bytes of nibbles. */
export const Q4K_BLOCK_BYTES = 144;
/** Bytes of the scales and mins ahead of the nibbles. */
export const Q4K_SCALE_BYTES = 16;

/**
 * The i16x8 [s_j, s_j, s_j, s_j, s_j+1, s_j+1, s_j+1, s_j+1] of the scale bytes `scales` (bytes 0-7 of a block, 6-bit
 * already).
 */
export function scalePair(scales: Operand, j: number): Expr {
  return wordPair(simd('i16x8.extend_low_i8x16_u', scales), j);
}

/**
 * The integer dot product of sub-block j (32 values) of a Q4_K super-block at `row` with x's i16 codes `xv` (four
 * i16x8 vectors in X_ORDER), as an i32x4 of partial sums. The nibbles are the low halves of bytes 32c..32c+31 for
 * even j and the high halves for odd j (c = j >> 1); read as 16-bit lanes, a lane's bits 0 and 8 (even j) or 4 and 12
 * (odd j) hold them, which i16x8 shifts and a mask bring down without widening. Sets the two `raw` locals, which the
 * returned expression reads.
 */
function subBlockDot(
  f: FunctionBuilder,
  row: Local,
  j: number,
  xv: readonly Local[],
  raw: readonly [Local, Local],
  mask: Local,
): Expr {
  const chunk = Q4K_SCALE_BYTES + 32 * (j >> 1);
  const low = 4 * (j % 2);
  const nibble = (bytes: Local, shift: number): Operand => {
    const shifted: Operand = shift === 0 ? bytes : simd('i16x8.shr_u', bytes, shift);
    return shift === 12 ? shifted : simd('v128.and', shifted, mask);
  };
  const dots: Expr[] = [];
  for (let half = 0; half < 2; half++) {
    f.set(raw[half], simdLoad('v128.load', row, chunk + 16 * half));
    dots.push(simd('i32x4.dot_i16x8_s', nibble(raw[half], low), xv[2 * half]));
    dots.push(simd('i32x4.dot_i16x8_s', nibble(raw[half], low + 8), xv[2 * half + 1]));
  }
  return simd('i32x4.add', simd('i32x4.add', dots[0], dots[1]), simd('i32x4.add', dots[2], dots[3]));
}

/**
 * The nibbles of a pair of Q4_K sub-blocks 2c, 2c + 1 from their 32 bytes `raw0`, `raw1`: the low halves (sub-block
 * 2c's values 0-15, 16-31), then the high ones (2c + 1's), each by the mask `mask` (15 in every byte) after a 16-bit
 * shift for the high ones (x86 has no byte shift).
 */
export function pairNibbles(raw0: Operand, raw1: Operand, mask: Operand): Expr[] {
  const high = (raw: Operand) => simd('v128.and', simd('i16x8.shr_u', raw, 4), mask);
  return [simd('v128.and', raw0, mask), simd('v128.and', raw1, mask), high(raw0), high(raw1)];
}

/**
 * The integer dot products of a pair of Q4_K sub-blocks with relaxed SIMD, narrowed to one i16x8 (lanes 0-3 the
 * first's partial sums, 4-7 the second's): x's codes of the pair as bytes (`x(q)`, vectors q = 0-3) against the pair's
 * unsigned nibbles (pairNibbles), in two byte dot products per sub-block (each lane at most 8 · 15 · 127 in size, so
 * the narrowing is exact).
 */
export function pairByteDots(x: (q: number) => Operand, nibbles: readonly Operand[]): Expr {
  const byteDot = (q: number, acc: Expr) =>
    relaxedSimd('i32x4.relaxed_dot_i8x16_i7x16_add_s', x(q), nibbles[q], acc);
  return simd('i16x8.narrow_i32x4_s', byteDot(1, byteDot(0, v128Zero)), byteDot(3, byteDot(2, v128Zero)));
}

/**
 * The integer dot products of a pair of Q4_K sub-blocks in relaxed SIMD's i16 form (ByteDot `i16`): for each sub-block,
 * an i16x8 of its sums (each lane the sum of four products, at most 4 · 128 · 15 in size: exact), from x's codes of the
 * pair as bytes (`x(q)`, vectors q = 0-3) against the pair's unsigned nibbles (pairNibbles).
 */
export function pairWordDots(x: (q: number) => Operand, nibbles: readonly Operand[]): Expr[] {
  const dot = (q: number) => wordDot(x(q), nibbles[q]);
  return [0, 2].map((q) => simd('i16x8.add', dot(q), dot(q + 1)));
}

/**
 * `q4k_dot`: out[r, j] = sum_b dx[r, b] · (d[j, b] · sum_s s[j, b, s] · (qx · q)[s] − dmin[j, b] · sum_s m[j, b, s] ·
 * Σqx[s]) for x quantized per super-block of 256 to int8 codes qx (held widened to i16, with each sub-block's code
 * sum) with scales dx, as llama.cpp's Q8_K, against Q4_K blocks read directly (see QuantizedWeight): each sub-block's
 * integer dot product runs in i32x4.dot_i16x8_s, two sub-blocks' sums are narrowed to i16 and scaled by their 6-bit
 * scales in one more, the mins meet the code sums in another, and the super-block is scaled once in f32 (the loops
 * and parameters: superBlockDotKernel; scales holds d, dmin per super-block). With relaxed SIMD (kQuantXForm `i8`)
 * x's codes are bytes, and each pair of sub-blocks' 32 bytes are read once and take four byte dot products
 * against their nibbles (pairNibbles, pairByteDots); in the i16 form of the byte dot product (ByteDot) the four give
 * each sub-block's sums in i16, which meet its scale at once (pairWordDots).
 */
export const Q4K_DOT = superBlockDotKernel('q4k_dot', {
  blockBytes: Q4K_BLOCK_BYTES,
  scaleBytes: 8,
  prepare(f, features) {
    const isum = f.locals(V, OUTPUT_TILE);
    const even = f.locals(V, OUTPUT_TILE);
    const sixBits = f.locals(V, OUTPUT_TILE);
    const scaleWords = f.locals(V, OUTPUT_TILE);
    const relaxed = kQuantXForm(features) === 'i8';
    const xv = f.locals(V, 4);
    const [raw0, raw1, mins, mask] = f.locals(V, 4);
    f.set(mask, simd(relaxed ? 'i8x16.splat' : 'i16x8.splat', 15));
    return ({ outputs, rows, scales, acc, xp, dx }) => {
      for (let t = 0; t < outputs; t++) {
        f.set(isum[t], v128Zero);
        f.set(sixBits[t], simd('v128.and', simdLoad('v128.load', rows[t]), simd('i8x16.splat', 63)));
      }
      /** isum[t] += the pair of sub-blocks j, j + 1 (narrowed to i16) scaled by their 6-bit scales. */
      const addScaledPair = (t: number, pair: Expr, j: number) => {
        const scaled = simd('i32x4.dot_i16x8_s', pair, scalePair(sixBits[t], j));
        f.set(isum[t], simd('i32x4.add', isum[t], scaled));
      };
      /** isum[t] += sub-blocks j and j + 1's sums (i16, `pairWordDots`), each scaled by its 6-bit scale. */
      const addScaledSubBlocks = (t: number, sums: readonly Expr[], j: number) => {
        sums.forEach((sum, h) => {
          const scaled = simd('i32x4.dot_i16x8_s', sum, wordSplat(scaleWords[t], j + h));
          f.set(isum[t], simd('i32x4.add', isum[t], scaled));
        });
      };
      if (relaxed) {
        if (features.byteDot === 'i16') {
          for (let t = 0; t < outputs; t++)
            f.set(scaleWords[t], simd('i16x8.extend_low_i8x16_u', sixBits[t]));
        }
        for (let c = 0; c < 4; c++) {
          for (let q = 0; q < 4; q++) f.set(xv[q], simdLoad('v128.load', xp, 64 * c + 16 * q));
          for (let t = 0; t < outputs; t++) {
            f.set(raw0, simdLoad('v128.load', rows[t], Q4K_SCALE_BYTES + 32 * c));
            f.set(raw1, simdLoad('v128.load', rows[t], Q4K_SCALE_BYTES + 32 * c + 16));
            const nibbles = pairNibbles(raw0, raw1, mask);
            if (features.byteDot === 'i16')
              addScaledSubBlocks(
                t,
                pairWordDots((q) => xv[q], nibbles),
                2 * c,
              );
            else
              addScaledPair(
                t,
                pairByteDots((q) => xv[q], nibbles),
                2 * c,
              );
          }
        }
      } else {
        for (let j = 0; j < 8; j++) {
          for (let q = 0; q < 4; q++) f.set(xv[q], simdLoad('v128.load', xp, 64 * j + 16 * q));
          for (let t = 0; t < outputs; t++) {
            const dot = subBlockDot(f, rows[t], j, xv, [raw0, raw1], mask);
            if (j % 2 === 0) {
              f.set(even[t], dot);
              continue;
            }
            // Each lane of a sub-block's sums is at most 8 · 15 · 127 in size, so the i16 narrowing is exact; one
            // dot product then scales both sub-blocks of the pair.
            addScaledPair(t, simd('i16x8.narrow_i32x4_s', even[t], dot), j - 1);
          }
        }
      }
      for (let t = 0; t < outputs; t++) {
        f.set(mins, simd('i16x8.extend_high_i8x16_s', sixBits[t])); // bytes 8-15: the mins, as i16
        const minDot = simd(
          'i32x4.dot_i16x8_s',
          mins,
          simdLoad('v128.load', xp, relaxed ? X_BYTE_SUMS : X_SUMS),
        );
        const d = simd('f32x4.splat', scalar.fmul(load('f32.load', scales[t]), dx));
        const dmin = simd('f32x4.splat', scalar.fmul(load('f32.load', scales[t], 4), dx));
        f.set(acc[t], mulAdd(features, simd('f32x4.convert_i32x4_s', isum[t]), d, acc[t]));
        f.set(
          acc[t],
          simd('f32x4.sub', acc[t], simd('f32x4.mul', simd('f32x4.convert_i32x4_s', minDot), dmin)),
        );
      }
    };
  },
});
