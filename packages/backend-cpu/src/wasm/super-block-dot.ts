import {
  type Expr,
  emitOperand,
  type KernelFeatures,
  type Local,
  laneSum,
  load,
  type Operand,
  op,
  scalar,
  v128Zero,
} from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { writeUnsigned } from './leb128';
import { SIMD_I8X16_SHUFFLE, SIMD_PREFIX, ValType } from './opcodes';

const { add, mul } = scalar;

/**
 * Bytes of one super-block of x as the K-quant kernels' quantizer writes it in the `i16` form (see kQuantXForm): its
 * 256 int8 codes widened to i16, each group of 32 in its kernel's order (X_ORDER for Q4_K), then the eight sums of the
 * codes of each group, as i16 (for Q4_K's mins). The `i8` form uses at most its first 288 bytes.
 */
export const X_SUPER_BLOCK_BYTES = 528;

/**
 * Which of a group's 32 values each i16 lane of x's four vectors holds: lane k of a 16-bit view of 16 code bytes
 * holds bytes 2k and 2k + 1, so one shift and mask gives the even values (0, 2, .., 14 of those 16) and another the odd.
 */
export const X_ORDER: readonly number[] = [0, 1, 16, 17].flatMap((start) =>
  Array.from({ length: 8 }, (_, k) => start + 2 * k),
);

/** Byte offset of the group sums within a super-block of x. */
export const X_SUMS = 512;

/** The K-quant types, whose blocks are super-blocks of 256 values. */
export type KQuantType = 'q4_k' | 'q6_k';

/** The two layouts of x's super-blocks the K-quant kernels read (see kQuantXForm). */
export type KQuantXForm = 'i16' | 'i8';

/**
 * How the K-quant kernels of a module built with `features` read x's super-blocks (X_SUPER_BLOCK_BYTES apart):
 * `i16`, the codes widened to i16 in groups of 32 in the kernel's order, then the group sums at X_SUMS (plain SIMD);
 * `i8`, with relaxed SIMD's byte dot product, the 256 codes as bytes in order, then at X_BYTE_SUMS the sums of each span of codes the
 * kernel needs (i16: 32 for Q4_K's mins, 16 for Q6_K's offset), so the byte dot products see the weights' codes
 * unsigned.
 */
export function kQuantXForm(features: KernelFeatures): KQuantXForm {
  return features.byteDot === 'none' ? 'i16' : 'i8';
}

/** Byte offset of the sums within a super-block of x in the `i8` form. */
export const X_BYTE_SUMS = 256;

/**
 * Outputs that share each group of x loaded, n / OUTPUT_TILE rows apart (long sequential streams, which the hardware
 * prefetches: adjacent rows of a 768-wide Q6_K matrix, 624 bytes each, streamed at a quarter of the speed from
 * memory); the remaining outputs run one at a time.
 */
export const OUTPUT_TILE = 2;

/** i8x16.shuffle of `a` (bytes 0-15) and `b` (bytes 16-31): byte i of the result is byte `bytes[i]` of the pair. */
export function byteShuffle(a: Operand, b: Operand, bytes: readonly number[]): Expr {
  return {
    kind: 'expr',
    emit: (code) => {
      emitOperand(code, a);
      emitOperand(code, b);
      code.push(SIMD_PREFIX);
      writeUnsigned(code, SIMD_I8X16_SHUFFLE);
      for (const byte of bytes) code.push(byte);
    },
  };
}

/** The byte indices of a shuffle that takes lanes `lanes` of `size` bytes each from its first operand. */
function laneBytes(lanes: readonly number[], size: number): number[] {
  return lanes.flatMap((lane) => Array.from({ length: size }, (_, b) => size * lane + b));
}

/** The words of the half of the i16x8 `words` that holds word j, each twice: [w_h, w_h, w_h+1, w_h+1, ...]. */
function doubledHalf(words: Operand, j: number): Expr {
  const half = j < 4 ? 0 : 4;
  return byteShuffle(
    words,
    v128Zero,
    laneBytes(
      [0, 0, 1, 1, 2, 2, 3, 3].map((k) => half + k),
      2,
    ),
  );
}

/**
 * [w_j, w_j, w_j, w_j, w_j+1, w_j+1, w_j+1, w_j+1] of the i16x8 `words` (j even): the words of its half interleaved
 * with themselves, then two 32-bit lanes repeated. V8 lowers each of the two to one x86 instruction (punpcklwd or
 * punpckhwd, pshufd), where a byte shuffle of that pattern builds its 16-byte mask from immediates first, in four.
 */
export function wordPair(words: Expr, j: number): Expr {
  const lane = j % 4;
  return byteShuffle(doubledHalf(words, j), v128Zero, laneBytes([lane, lane, lane + 1, lane + 1], 4));
}

/** Word j of the i16x8 `words` in every lane, in the same two shuffles as wordPair. */
export function wordSplat(words: Operand, j: number): Expr {
  const lane = j % 4;
  return byteShuffle(doubledHalf(words, j), v128Zero, laneBytes([lane, lane, lane, lane], 4));
}

/** What one super-block's terms of `outputs` outputs read and add into. */
export interface SuperBlockStep {
  readonly outputs: number;
  /** Byte address of each output's block of codes. */
  readonly rows: readonly Local[];
  /** Byte address of each output's block scales (f32). */
  readonly scales: readonly Local[];
  /** Each output's f32x4 accumulator. */
  readonly acc: readonly Local[];
  /** Byte address of x's super-block (X_SUPER_BLOCK_BYTES) and its scale (f32). */
  readonly xp: Local;
  readonly dx: Local;
}

/** A K-quant dot kernel's own part: the bytes of its blocks and scales, and the code of one super-block. */
export interface SuperBlockFormat {
  /** Bytes of one block's codes in `codes`. */
  readonly blockBytes: number;
  /** Bytes of one block's f32 scales in `scales`. */
  readonly scaleBytes: number;
  /**
   * Declares the locals it needs (and sets any constants) once, returning the emitter of one super-block's terms
   * into `acc`.
   */
  prepare(f: FunctionBuilder, features: KernelFeatures): (step: SuperBlockStep) => void;
}

/**
 * A kernel `name`(m, n, blocks, xCodes, xScales, scales, codes, out, oStep): out[r, j] for the m rows of x (quantized
 * per super-block of 256, rows blocks · X_SUPER_BLOCK_BYTES bytes apart, their scales blocks · 4) against the n
 * weight rows of `blocks` super-blocks each (see SuperBlockFormat). Outputs go OUTPUT_TILE at a time, n / OUTPUT_TILE
 * apart (then the last n mod OUTPUT_TILE one at a time), sharing each super-block of x loaded, for every row of x in
 * turn; each accumulator's lanes are summed once at the end. Pointers and `oStep` (out's row stride) are in bytes.
 */
export function superBlockDotKernel<const Name extends string>(name: Name, format: SuperBlockFormat) {
  return kernel({
    name,
    params: i32('m', 'n', 'blocks', 'xCodes', 'xScales', 'scales', 'codes', 'out', 'oStep'),
    emit(f, { m, n, blocks, xCodes, xScales, scales, codes, out, oStep }, { features }) {
      const [j0, r, b, wStep, sStep, xp, xs, part] = f.locals(ValType.i32, 8);
      const rows = f.locals(ValType.i32, OUTPUT_TILE);
      const sps = f.locals(ValType.i32, OUTPUT_TILE);
      const acc = f.locals(ValType.v128, OUTPUT_TILE);
      const [dx, sum] = f.locals(ValType.f32, 2);
      const block = format.prepare(f, features);
      f.set(wStep, mul(blocks, format.blockBytes));
      f.set(sStep, mul(blocks, format.scaleBytes));
      f.set(part, op('i32.div_u', n, OUTPUT_TILE));

      /** Outputs j0 .. j0 + outputs against row r of x. */
      const outputsAgainstRow = (outputs: number) => {
        /** Output t of the tile: j0 + t · part. */
        const output = (t: number) => (t === 0 ? j0 : add(j0, mul(part, t)));
        for (let t = 0; t < outputs; t++) {
          f.set(acc[t], v128Zero);
          f.set(rows[t], add(codes, mul(output(t), wStep)));
          f.set(sps[t], add(scales, mul(output(t), sStep)));
        }
        f.set(xp, add(xCodes, mul(r, mul(blocks, X_SUPER_BLOCK_BYTES))));
        f.set(xs, add(xScales, mul(r, mul(blocks, 4))));
        f.for(b, 0, blocks, 1, () => {
          f.set(dx, load('f32.load', xs));
          block({ outputs, rows, scales: sps, acc, xp, dx });
          for (let t = 0; t < outputs; t++) {
            f.set(rows[t], add(rows[t], format.blockBytes));
            f.set(sps[t], add(sps[t], format.scaleBytes));
          }
          f.set(xp, add(xp, X_SUPER_BLOCK_BYTES));
          f.set(xs, add(xs, 4));
        });
        for (let t = 0; t < outputs; t++) {
          const v = acc[t];
          f.set(sum, laneSum(v));
          f.store('f32.store', add(out, add(mul(r, oStep), mul(output(t), 4))), sum);
        }
      };

      f.for(j0, 0, part, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(OUTPUT_TILE));
      });
      f.for(j0, mul(part, OUTPUT_TILE), n, 1, () => {
        f.for(r, 0, m, 1, () => outputsAgainstRow(1));
      });
    },
  });
}
