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
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { ValType } from './opcodes';
import {
  byteShuffle,
  kQuantXForm,
  OUTPUT_TILE,
  superBlockDotKernel,
  X_BYTE_SUMS,
  X_SUMS,
} from './super-block-dot';

const V = ValType.v128;

/** Bytes of a Q4_K super-block's codes (see QuantizedWeight): 8 scales, 8 mins, then 128 bytes of nibbles. */
export const Q4K_BLOCK_BYTES = 144;
/** Bytes of the scales and mins ahead of the nibbles. */
const SCALE_BYTES = 16;

/**
 * The i16x8 [s_j, s_j, s_j, s_j, s_j+1, s_j+1, s_j+1, s_j+1] of the scale bytes `scales` (bytes 0-7 of a block, 6-bit
 * already): byte j or j + 1 for each low byte and a zero byte (byte 16, of `zero`) for each high.
 */
function scalePair(scales: Operand, zero: Operand, j: number): Expr {
  return byteShuffle(
    scales,
    zero,
    Array.from({ length: 16 }, (_, i) => (i % 2 === 1 ? 16 : i < 8 ? j : j + 1)),
  );
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
  const chunk = SCALE_BYTES + 32 * (j >> 1);
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
 * subBlockDot with relaxed SIMD: x's codes of sub-block j as bytes (`xv`, two vectors) against the unsigned nibbles,
 * the low halves of the 32 bytes for even j (masked by `mask`, 15 in every byte) and the high ones for odd j, in two
 * byte dot products (each lane at most 8 · 15 · 127 in size).
 */
function subBlockByteDot(
  f: FunctionBuilder,
  row: Local,
  j: number,
  xv: readonly Local[],
  [raw, partial]: readonly [Local, Local],
  mask: Local,
): Expr {
  const chunk = SCALE_BYTES + 32 * (j >> 1);
  const nibbles = () => (j % 2 === 0 ? simd('v128.and', raw, mask) : simd('i8x16.shr_u', raw, 4));
  const byteDot = (x: Local, acc: Expr | Local) =>
    relaxedSimd('i32x4.relaxed_dot_i8x16_i7x16_add_s', x, nibbles(), acc);
  f.set(raw, simdLoad('v128.load', row, chunk));
  f.set(partial, byteDot(xv[0], v128Zero));
  f.set(raw, simdLoad('v128.load', row, chunk + 16));
  return byteDot(xv[1], partial);
}

/**
 * `q4k_dot`: out[r, j] = sum_b dx[r, b] · (d[j, b] · sum_s s[j, b, s] · (qx · q)[s] − dmin[j, b] · sum_s m[j, b, s] ·
 * Σqx[s]) for x quantized per super-block of 256 to int8 codes qx (held widened to i16, with each sub-block's code
 * sum) with scales dx, as llama.cpp's Q8_K, against Q4_K blocks read directly (see QuantizedWeight): each sub-block's
 * integer dot product runs in i32x4.dot_i16x8_s, two sub-blocks' sums are narrowed to i16 and scaled by their 6-bit
 * scales in one more, the mins meet the code sums in another, and the super-block is scaled once in f32 (the loops
 * and parameters: superBlockDotKernel; scales holds d, dmin per super-block). With relaxed SIMD (kQuantXForm `i8`)
 * x's codes are bytes and each sub-block's product is two byte dot products against the raw nibbles (subBlockByteDot).
 */
export const Q4K_DOT = superBlockDotKernel('q4k_dot', {
  blockBytes: Q4K_BLOCK_BYTES,
  scaleBytes: 8,
  prepare(f, features) {
    const isum = f.locals(V, OUTPUT_TILE);
    const even = f.locals(V, OUTPUT_TILE);
    const sixBits = f.locals(V, OUTPUT_TILE);
    const relaxed = kQuantXForm(features) === 'i8';
    const xv = f.locals(V, 4);
    const [raw0, raw1, mins, mask] = f.locals(V, 4);
    f.set(mask, relaxed ? simd('i8x16.splat', 15) : simd('i16x8.splat', 15));
    return ({ outputs, rows, scales, acc, xp, dx }) => {
      for (let t = 0; t < outputs; t++) {
        f.set(isum[t], v128Zero);
        f.set(sixBits[t], simd('v128.and', simdLoad('v128.load', rows[t]), simd('i8x16.splat', 63)));
      }
      for (let j = 0; j < 8; j++) {
        if (relaxed) for (let q = 0; q < 2; q++) f.set(xv[q], simdLoad('v128.load', xp, 32 * j + 16 * q));
        else for (let q = 0; q < 4; q++) f.set(xv[q], simdLoad('v128.load', xp, 64 * j + 16 * q));
        for (let t = 0; t < outputs; t++) {
          const dot = relaxed
            ? subBlockByteDot(f, rows[t], j, xv, [raw0, raw1], mask)
            : subBlockDot(f, rows[t], j, xv, [raw0, raw1], mask);
          if (j % 2 === 0) {
            f.set(even[t], dot);
            continue;
          }
          // Each lane of a sub-block's sums is at most 8 · 15 · 127 in size, so the i16 narrowing is exact; one
          // dot product then scales both sub-blocks of the pair.
          const pair = simd('i16x8.narrow_i32x4_s', even[t], dot);
          const scaled = simd('i32x4.dot_i16x8_s', pair, scalePair(sixBits[t], v128Zero, j - 1));
          f.set(isum[t], simd('i32x4.add', isum[t], scaled));
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
