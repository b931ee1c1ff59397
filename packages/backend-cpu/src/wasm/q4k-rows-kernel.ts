import { laneSum, load, mulAdd, scalar, simd, simdLoad, v128Zero } from './expr';
import { forRowTiles } from './gemm-few-kernel';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import {
  pairByteDots,
  pairNibbles,
  pairWordDots,
  Q4K_BLOCK_BYTES,
  Q4K_SCALE_BYTES,
  scalePair,
} from './q4k-dot-kernel';
import { wordSplat, X_BYTE_SUMS, X_SUPER_BLOCK_BYTES } from './super-block-dot';

const { add, mul } = scalar;

const I = ValType.i32;
const V = ValType.v128;

/** Rows of x that share each pair of sub-blocks' nibbles brought out of their bytes. */
export const Q4K_ROW_TILE = 4;

/**
 * `q4k_rows_dot`: q4k_dot's product (same parameters and sums) for many rows of x with relaxed SIMD, an output at a
 * time against Q4K_ROW_TILE rows: each pair of sub-blocks' 32 bytes of nibbles is read and split into its four
 * vectors of low and high nibbles once for the tile's rows (q4k_dot does it again for every row, about a third of
 * its instructions), and its scales are built once; each row's codes are read from memory by the byte dot products.
 * Rows of x in tiles of Q4K_ROW_TILE, then one tile of what is left. Relaxed SIMD's byte dot product only.
 */
export const Q4K_ROWS_DOT = kernel({
  name: 'q4k_rows_dot',
  params: i32('m', 'n', 'blocks', 'xCodes', 'xScales', 'scales', 'codes', 'out', 'oStep'),
  emit(f, { m, n, blocks, xCodes, xScales, scales, codes, out, oStep }, { features }) {
    if (features.byteDot === 'none') {
      // Built for the byte dot product only: a module without it never calls this kernel (see kQuantMatmulInto).
      f.trap();
      return;
    }
    const [j, i, b, row, sp, xRowStep, sRowStep] = f.locals(I, 7);
    const xp = f.locals(I, Q4K_ROW_TILE);
    const xs = f.locals(I, Q4K_ROW_TILE);
    const acc = f.locals(V, Q4K_ROW_TILE);
    const isum = f.locals(V, Q4K_ROW_TILE);
    const nibbles = f.locals(V, 4);
    const [raw0, raw1, sixBits, pairScales] = f.locals(V, 4);
    const subBlockScales = f.locals(V, 2);
    const sum = f.local(ValType.f32);
    const mask = f.constantBytes(15);
    f.set(xRowStep, mul(blocks, X_SUPER_BLOCK_BYTES));
    f.set(sRowStep, mul(blocks, 4));

    /** Output j against rows [i, i + rows) of x. */
    const tile = (rows: number) => {
      for (let t = 0; t < rows; t++) {
        f.set(acc[t], v128Zero);
        f.set(xp[t], add(xCodes, mul(add(i, t), xRowStep)));
        f.set(xs[t], add(xScales, mul(add(i, t), sRowStep)));
      }
      f.set(row, add(codes, mul(j, mul(blocks, Q4K_BLOCK_BYTES))));
      f.set(sp, add(scales, mul(j, mul(blocks, 8))));
      f.for(b, 0, blocks, 1, () => {
        for (let t = 0; t < rows; t++) f.set(isum[t], v128Zero);
        f.set(sixBits, simd('v128.and', simdLoad('v128.load', row), f.constantBytes(63)));
        for (let c = 0; c < 4; c++) {
          f.set(raw0, simdLoad('v128.load', row, Q4K_SCALE_BYTES + 32 * c));
          f.set(raw1, simdLoad('v128.load', row, Q4K_SCALE_BYTES + 32 * c + 16));
          pairNibbles(raw0, raw1, mask).forEach((nibble, q) => {
            f.set(nibbles[q], nibble);
          });
          if (features.byteDot === 'i16') {
            // Sub-blocks 2c and 2c + 1's scales, each in every lane.
            const words = simd('i16x8.extend_low_i8x16_u', sixBits);
            subBlockScales.forEach((scales, h) => {
              f.set(scales, wordSplat(words, 2 * c + h));
            });
          } else {
            f.set(pairScales, scalePair(sixBits, 2 * c));
          }
          for (let t = 0; t < rows; t++) {
            // x's codes of sub-blocks 2c and 2c + 1: bytes 64c .. 64c + 63 of its super-block.
            const x = (q: number) => simdLoad('v128.load', xp[t], 64 * c + 16 * q);
            if (features.byteDot === 'i16') {
              pairWordDots(x, nibbles).forEach((sums, h) => {
                const scaled = simd('i32x4.dot_i16x8_s', sums, subBlockScales[h]);
                f.set(isum[t], simd('i32x4.add', isum[t], scaled));
              });
              continue;
            }
            const scaled = simd('i32x4.dot_i16x8_s', pairByteDots(x, nibbles), pairScales);
            f.set(isum[t], simd('i32x4.add', isum[t], scaled));
          }
        }
        const mins = simd('i16x8.extend_high_i8x16_s', sixBits); // bytes 8-15: the mins, as i16
        for (let t = 0; t < rows; t++) {
          const dx = load('f32.load', xs[t]);
          const d = simd('f32x4.splat', scalar.fmul(load('f32.load', sp), dx));
          const dmin = simd('f32x4.splat', scalar.fmul(load('f32.load', sp, 4), dx));
          const minDot = simd('i32x4.dot_i16x8_s', mins, simdLoad('v128.load', xp[t], X_BYTE_SUMS));
          f.set(acc[t], mulAdd(features, simd('f32x4.convert_i32x4_s', isum[t]), d, acc[t]));
          f.set(
            acc[t],
            simd('f32x4.sub', acc[t], simd('f32x4.mul', simd('f32x4.convert_i32x4_s', minDot), dmin)),
          );
          f.set(xp[t], add(xp[t], X_SUPER_BLOCK_BYTES));
          f.set(xs[t], add(xs[t], 4));
        }
        f.set(row, add(row, Q4K_BLOCK_BYTES));
        f.set(sp, add(sp, 8));
      });
      for (let t = 0; t < rows; t++) {
        f.set(sum, laneSum(acc[t]));
        f.store('f32.store', add(out, add(mul(add(i, t), oStep), mul(j, 4))), sum);
      }
    };

    f.for(j, 0, n, 1, () => forRowTiles(f, i, 0, m, Q4K_ROW_TILE, tile));
  },
});
