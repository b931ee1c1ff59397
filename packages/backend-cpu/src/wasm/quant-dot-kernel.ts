import type { QuantType } from '@loom/tensor';
import {
  type Expr,
  type KernelFeatures,
  type Local,
  laneSum,
  mulAdd,
  type Operand,
  op,
  relaxedSimd,
  scalar,
  simd,
  simdLoad,
  v128Zero,
  wordDot,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';

const { add, mul } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/**
 * Outputs that share each block of x loaded, n / 4 rows apart (each of them then walks its own quarter of W in order:
 * four long sequential streams, which the hardware prefetches far better than four short rows side by side); the
 * remaining outputs run one at a time.
 */
const QUANT_OUTPUT_TILE = 4;

/** Bytes of codes per 32-value block: 32 int8 (Q8_0) or 16 bytes of nibble pairs (Q4_0). */
export function quantBlockBytes(type: QuantType): number {
  return type === 'q8_0' ? 32 : 16;
}

/**
 * How the activation quantizer lays out the 32 int8 codes q of each block of x for a kernel:
 * - `i16`: q widened to i16 (64 bytes), for i32x4.dot_i16x8_s against Q8_0 codes widened alike (plain SIMD);
 * - `i16-nibbles`: q widened to i16 in the order the Q4_0 nibbles come out of the 16-bit lanes of a block's bytes
 *   (64 bytes): q[0, 2, .., 14], q[16, 18, .., 30], q[1, 3, .., 15], q[17, 19, .., 31] (plain SIMD);
 * - `i8`: q as bytes (32 bytes), the signed operand of the relaxed byte dot product against Q4_0's raw nibbles;
 * - `split`: max(q, 0) then max(-q, 0) as bytes (64 bytes), the 7-bit operands of two relaxed byte dot products
 *   against Q8_0's signed codes (q = max(q, 0) - max(-q, 0); both are 0..127, where that instruction is exact).
 */
export type ActivationForm = 'i16' | 'i16-nibbles' | 'i8' | 'split';

/** The layout of x's codes the `type` kernel of a module built with `features` reads. */
export function activationForm(type: QuantType, features: KernelFeatures): ActivationForm {
  if (type === 'q8_0') return features.byteDot === 'none' ? 'i16' : 'split';
  return features.byteDot === 'none' ? 'i16-nibbles' : 'i8';
}

/** Bytes of one block of x's codes in `form`. */
export function activationBlockBytes(form: ActivationForm): number {
  return form === 'i8' ? 32 : 64;
}

/** The v128 locals a block's integer dot product works in. */
interface BlockLocals {
  /** x's codes of the current block as `form` lays them out, loaded once for all outputs of a tile. */
  readonly x: readonly Local[];
  /** Q4_0 only: each i32 lane -2 · sum(q), so the four lanes add -8 · sum(q), the nibbles' offset. */
  readonly bias: Local;
  /** Q4_0 only: 15 in every byte (`i8`) or 16-bit lane (`i16-nibbles`), the nibble mask. */
  readonly mask: Local;
  readonly raw: Local;
  readonly half: Local;
}

/** The sum of four i32x4 vectors. */
function sum4(v: readonly [Expr, Expr, Expr, Expr]): Expr {
  return simd('i32x4.add', simd('i32x4.add', v[0], v[1]), simd('i32x4.add', v[2], v[3]));
}

/** Relaxed c + byte dot a · b: a's bytes signed, b's 0..127. */
function byteDot(a: Operand, b: Operand, c: Operand): Expr {
  return relaxedSimd('i32x4.relaxed_dot_i8x16_i7x16_add_s', a, b, c);
}

/**
 * An i32x4 whose lanes add up to sum_i q[i] · code[i] over the block of weight codes at `w` (Q4_0 codes as
 * nibble - 8), statements into `f` first.
 */
function blockDot(
  f: FunctionBuilder,
  form: ActivationForm,
  w: Operand,
  l: BlockLocals,
  features: KernelFeatures,
): Expr {
  if (form === 'split') {
    // Q8_0: sum_i code[i] · max(q, 0) - sum_i code[i] · max(-q, 0).
    f.set(l.raw, simdLoad('v128.load', w));
    f.set(l.half, simdLoad('v128.load', w, 16));
    if (features.byteDot === 'i16') {
      // The i16 form: each lane of code · q⁺ − code · q⁻ is two products code · q, at most 2 · 128 · 127 in size
      // (exact in i16, though either part alone may not be), then its pairs added into i32.
      const part = (codes: Local, q: number) =>
        simd('i16x8.sub', wordDot(codes, l.x[q]), wordDot(codes, l.x[q + 2]));
      return simd(
        'i32x4.add',
        simd('i32x4.extadd_pairwise_i16x8_s', part(l.raw, 0)),
        simd('i32x4.extadd_pairwise_i16x8_s', part(l.half, 1)),
      );
    }
    const positive = byteDot(l.half, l.x[1], byteDot(l.raw, l.x[0], v128Zero));
    const negative = byteDot(l.half, l.x[3], byteDot(l.raw, l.x[2], v128Zero));
    return simd('i32x4.sub', positive, negative);
  }
  if (form === 'i8') {
    // Q4_0: sum_i q[i] · nibble[i] - 8 · sum(q), the offset carried in by the bias. The high nibbles by a 16-bit
    // shift and the mask: x86 has no byte shift, and V8 builds its mask anew for each i8x16.shr_u.
    f.set(l.raw, simdLoad('v128.load', w));
    const low = simd('v128.and', l.raw, l.mask);
    const high = simd('v128.and', simd('i16x8.shr_u', l.raw, 4), l.mask);
    if (features.byteDot === 'i16') {
      // The i16 form (each lane at most 4 · 128 · 15 in size: exact), its pairs then added into i32.
      const words = simd('i16x8.add', wordDot(l.x[0], low), wordDot(l.x[1], high));
      return simd('i32x4.add', simd('i32x4.extadd_pairwise_i16x8_s', words), l.bias);
    }
    return byteDot(l.x[1], high, byteDot(l.x[0], low, l.bias));
  }
  const dot = (q: number, codes: Operand) => simd('i32x4.dot_i16x8_s', codes, l.x[q]);
  if (form === 'i16-nibbles') {
    // Q4_0: the nibbles at bits 0, 4, 8 and 12 of each 16-bit lane, against x in that order, then the bias.
    f.set(l.raw, simdLoad('v128.load', w));
    const nibble = (shift: number) => simd('v128.and', simd('i16x8.shr_u', l.raw, shift), l.mask);
    const top = simd('i32x4.add', dot(3, simd('i16x8.shr_u', l.raw, 12)), l.bias);
    return sum4([dot(0, simd('v128.and', l.raw, l.mask)), dot(1, nibble(4)), dot(2, nibble(8)), top]);
  }
  // Q8_0: each eight codes loaded widened to i16 (one instruction each, no separate widening).
  const wide = (q: number) => simdLoad('v128.load8x8_s', w, 8 * q);
  return sum4([dot(0, wide(0)), dot(1, wide(1)), dot(2, wide(2)), dot(3, wide(3))]);
}

/**
 * A kernel out[r, j] = sum_b dx[r, b] · dw[j, b] · (sum_i qx[r, b, i] · qw[j, b, i]): x quantized per 32-block
 * to int8 codes qx with scales dx, as llama.cpp's Q8_0 activations, against the weight's blocks read directly.
 * Each block's integer dot product runs in i32x4.dot_i16x8_s on codes widened to i16, or with relaxed SIMD in the
 * byte dot product i32x4.relaxed_dot_i8x16_i7x16_add_s, whose second operand must be 0..127 to be exact on every
 * engine: Q4_0's raw nibbles (the offset 8 · sum(qx) comes from xBias) or, against Q8_0's signed codes, the positive
 * and negative parts of qx (see ActivationForm); either way the integer sums are exact. In the i16 form of the byte
 * dot product (ByteDot) both take that form instead. Each block's sum is scaled once. Outputs go QUANT_OUTPUT_TILE at
 * a time, n / 4 rows apart (then the last n mod 4 one at a time), sharing each block of x loaded, for every row of x in turn (the tile's rows of W stay in cache across rows). Parameters: m, n and `blocks` per row; pointers
 * and `oStep` (out's row stride) in bytes; xCodes rows are blocks · activationBlockBytes apart, xScales and xBias
 * (read by Q4_0 only) rows blocks · 4.
 */
function quantDotKernel<const N extends string>(name: N, type: QuantType) {
  return kernel({
    name,
    params: i32('m', 'n', 'blocks', 'xCodes', 'xScales', 'xBias', 'scales', 'codes', 'out', 'oStep'),
    emit(f, { m, n, blocks, xCodes, xScales, xBias, scales, codes, out, oStep }, { features }) {
      const form = activationForm(type, features);
      const xBytes = activationBlockBytes(form);
      const blockBytes = quantBlockBytes(type);
      const [j0, r, b, wStep, sStep, xp, xs, xb, wp, sp, quarter] = f.locals(I, 11);
      // Byte offsets of the tile's rows of codes, of scales and of outputs from its first row's (index 0 unused: 0).
      const wOffsets = f.locals(I, QUANT_OUTPUT_TILE);
      const sOffsets = f.locals(I, QUANT_OUTPUT_TILE);
      const oOffsets = f.locals(I, QUANT_OUTPUT_TILE);
      const acc = f.locals(V, QUANT_OUTPUT_TILE);
      const [bias, mask, raw, half, dx] = f.locals(V, 5);
      const l: BlockLocals = { x: f.locals(V, xBytes / 16), bias, mask, raw, half };
      const sum = f.local(F);
      f.set(wStep, mul(blocks, blockBytes));
      f.set(sStep, mul(blocks, 4));
      if (form === 'i8') f.set(mask, simd('i8x16.splat', 15));
      if (form === 'i16-nibbles') f.set(mask, simd('i16x8.splat', 15));
      f.set(quarter, op('i32.div_u', n, QUANT_OUTPUT_TILE));
      for (let t = 1; t < QUANT_OUTPUT_TILE; t++) {
        f.set(wOffsets[t], mul(wStep, mul(quarter, t)));
        f.set(sOffsets[t], mul(sStep, mul(quarter, t)));
        f.set(oOffsets[t], mul(quarter, 4 * t));
      }

      /** Outputs j0 .. j0 + outputs against row r of x. */
      const outputsAgainstRow = (outputs: number) => {
        for (let t = 0; t < outputs; t++) f.set(acc[t], v128Zero);
        f.set(xp, add(xCodes, mul(r, mul(blocks, xBytes))));
        f.set(xs, add(xScales, mul(r, sStep)));
        if (type === 'q4_0') f.set(xb, add(xBias, mul(r, sStep)));
        f.set(wp, add(codes, mul(j0, wStep)));
        f.set(sp, add(scales, mul(j0, sStep)));
        f.for(b, 0, blocks, 1, () => {
          l.x.forEach((v, q) => {
            f.set(v, simdLoad('v128.load', xp, 16 * q));
          });
          if (type === 'q4_0') f.set(bias, simdLoad('v128.load32_splat', xb));
          f.set(dx, simdLoad('v128.load32_splat', xs));
          for (let t = 0; t < outputs; t++) {
            const isum = blockDot(f, form, t === 0 ? wp : add(wp, wOffsets[t]), l, features);
            const dw = simdLoad('v128.load32_splat', t === 0 ? sp : add(sp, sOffsets[t]));
            const d = simd('f32x4.mul', dw, dx);
            f.set(acc[t], mulAdd(features, simd('f32x4.convert_i32x4_s', isum), d, acc[t]));
          }
          f.set(wp, add(wp, blockBytes));
          f.set(sp, add(sp, 4));
          f.set(xp, add(xp, xBytes));
          f.set(xs, add(xs, 4));
          if (type === 'q4_0') f.set(xb, add(xb, 4));
        });
        for (let t = 0; t < outputs; t++) {
          const v = acc[t];
          f.set(sum, laneSum(v));
          const at = add(out, add(mul(r, oStep), mul(j0, 4)));
          f.store('f32.store', t === 0 ? at : add(at, oOffsets[t]), sum);
        }
      };

      // Outputs j0, j0 + n / 4, j0 + n / 2 and j0 + 3n / 4 together, then the last n mod 4 one at a time.
      f.for(j0, 0, quarter, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(QUANT_OUTPUT_TILE));
      });
      f.for(j0, mul(quarter, QUANT_OUTPUT_TILE), n, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(1));
      });
    },
  });
}

/** `q8_0_dot`: int8-quantized x times a Q8_0 weight (see quantDotKernel). */
export const Q8_0_DOT = quantDotKernel('q8_0_dot', 'q8_0');
/** `q4_0_dot`: int8-quantized x times a Q4_0 weight (see quantDotKernel). */
export const Q4_0_DOT = quantDotKernel('q4_0_dot', 'q4_0');
