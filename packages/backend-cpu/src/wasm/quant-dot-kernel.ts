import type { QuantType } from '@loom/tensor';
import {
  type Expr,
  type Local,
  lane,
  load,
  mulAdd,
  type Operand,
  op,
  scalar,
  simd,
  simdLoad,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, mul, fadd, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/** Outputs that share each block of x loaded; the remaining outputs run one at a time. */
const QUANT_OUTPUT_TILE = 4;

/** Bytes of codes per 32-value block: 32 int8 (Q8_0) or 16 bytes of nibble pairs (Q4_0). */
export function quantBlockBytes(type: QuantType): number {
  return type === 'q8_0' ? 32 : 16;
}

/**
 * The 32 signed codes of the block at `codes` as two i8x16 vectors (values 0-15 and 16-31):
 * Q8_0 holds them as bytes; Q4_0 as 16 bytes whose low nibbles are values 0-15 and high nibbles
 * values 16-31, each minus 8 (`raw` holds the loaded bytes).
 */
function blockCodes(f: FunctionBuilder, type: QuantType, codes: Operand, raw: Local): [Expr, Expr] {
  if (type === 'q8_0') return [simdLoad('v128.load', codes), simdLoad('v128.load', codes, 16)];
  f.set(raw, simdLoad('v128.load', codes));
  const eight = simd('i8x16.splat', 8);
  const low = simd('i8x16.sub', simd('v128.and', raw, simd('i8x16.splat', 15)), eight);
  const high = simd('i8x16.sub', simd('i8x16.shr_u', raw, 4), eight);
  return [low, high];
}

/** Bytes of one block of x's codes, widened to i16 once by the caller's quantizer: 32 values. */
export const X_BLOCK_BYTES = 64;

/**
 * Sets `out` to the 32 codes of a block (two i8x16 vectors, which may read `raw`) widened to four i16x8 vectors,
 * in order; `half` holds each vector meanwhile.
 */
function widenCodes(
  f: FunctionBuilder,
  halves: readonly [Expr, Expr],
  half: Local,
  out: readonly Local[],
): void {
  halves.forEach((codes, h) => {
    f.set(half, codes);
    f.set(out[2 * h], simd('i16x8.extend_low_i8x16_s', half));
    f.set(out[2 * h + 1], simd('i16x8.extend_high_i8x16_s', half));
  });
}

/**
 * A kernel out[r, j] = sum_b dx[r, b] · dw[j, b] · (sum_i qx[r, b, i] · qw[j, b, i]): x quantized per 32-block
 * to int8 codes qx (held widened to i16) with scales dx, as llama.cpp's Q8_0 activations, against the weight's
 * blocks read directly; each block's integer dot product runs in i32x4.dot_i16x8_s and is scaled once. Outputs go
 * QUANT_OUTPUT_TILE at a time (then one at a time), sharing each block of x loaded, for every row of x in turn (the
 * tile's rows of W stay in cache across rows). Parameters: m, n and `blocks` per row; pointers and `oStep` (out's row
 * stride) in bytes; xCodes rows are blocks · 64 bytes apart, xScales rows blocks · 4.
 */
function quantDotKernel<const N extends string>(name: N, type: QuantType) {
  return kernel({
    name,
    params: i32('m', 'n', 'blocks', 'xCodes', 'xScales', 'scales', 'codes', 'out', 'oStep'),
    emit(f, { m, n, blocks, xCodes, xScales, scales, codes, out, oStep }, { features }) {
      const blockBytes = quantBlockBytes(type);
      const [j0, r, b, wStep, sStep, xp, xs, wp, sp, tileEnd] = f.locals(I, 10);
      const acc = f.locals(V, QUANT_OUTPUT_TILE);
      const xv = f.locals(V, 4);
      const w = f.locals(V, 4);
      const [raw, half, isum] = f.locals(V, 3);
      const [dx, sum] = f.locals(F, 2);
      f.set(wStep, mul(blocks, blockBytes));
      f.set(sStep, mul(blocks, 4));
      f.set(tileEnd, mul(op('i32.div_u', n, QUANT_OUTPUT_TILE), QUANT_OUTPUT_TILE));

      /** Outputs j0 .. j0 + outputs against row r of x. */
      const outputsAgainstRow = (outputs: number) => {
        for (let t = 0; t < outputs; t++) f.set(acc[t], v128Zero);
        f.set(xp, add(xCodes, mul(r, mul(blocks, X_BLOCK_BYTES))));
        f.set(xs, add(xScales, mul(r, sStep)));
        f.set(wp, add(codes, mul(j0, wStep)));
        f.set(sp, add(scales, mul(j0, sStep)));
        f.for(b, 0, blocks, 1, () => {
          for (let q = 0; q < 4; q++) f.set(xv[q], simdLoad('v128.load', xp, 16 * q));
          f.set(dx, load('f32.load', xs));
          for (let t = 0; t < outputs; t++) {
            const row = t === 0 ? wp : add(wp, mul(t, wStep));
            widenCodes(f, blockCodes(f, type, row, raw), half, w);
            const dot = (q: number) => simd('i32x4.dot_i16x8_s', w[q], xv[q]);
            f.set(
              isum,
              simd('i32x4.add', simd('i32x4.add', dot(0), dot(1)), simd('i32x4.add', dot(2), dot(3))),
            );
            const dw = load('f32.load', t === 0 ? sp : add(sp, mul(t, sStep)));
            const d = simd('f32x4.splat', fmul(dw, dx));
            f.set(acc[t], mulAdd(features, simd('f32x4.convert_i32x4_s', isum), d, acc[t]));
          }
          f.set(wp, add(wp, blockBytes));
          f.set(sp, add(sp, 4));
          f.set(xp, add(xp, X_BLOCK_BYTES));
          f.set(xs, add(xs, 4));
        });
        for (let t = 0; t < outputs; t++) {
          const v = acc[t];
          f.set(
            sum,
            fadd(
              fadd(lane('f32x4.extract_lane', v, 0), lane('f32x4.extract_lane', v, 1)),
              fadd(lane('f32x4.extract_lane', v, 2), lane('f32x4.extract_lane', v, 3)),
            ),
          );
          f.store('f32.store', add(out, add(mul(r, oStep), mul(add(j0, t), 4))), sum);
        }
      };

      f.for(j0, 0, tileEnd, QUANT_OUTPUT_TILE, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(QUANT_OUTPUT_TILE));
      });
      f.for(j0, tileEnd, n, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(1));
      });
    },
  });
}

/** `q8_0_dot`: int8-quantized x times a Q8_0 weight (see quantDotKernel). */
export const Q8_0_DOT = quantDotKernel('q8_0_dot', 'q8_0');
/** `q4_0_dot`: int8-quantized x times a Q4_0 weight (see quantDotKernel). */
export const Q4_0_DOT = quantDotKernel('q4_0_dot', 'q4_0');
