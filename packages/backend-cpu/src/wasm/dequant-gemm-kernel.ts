import type { HalfType, QuantType } from '@loom/tensor';
import { type Expr, type Local, load, op, scalar, shuffle32, simd, simdLoad } from './expr';
import type { FunctionBuilder } from './function-builder';
import { emitGemmFewT } from './gemm-few-kernel';
import { HALF_STEP, widenHalves } from './half-dot-kernel';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { Q4K_BLOCK_BYTES } from './q4k-dot-kernel';
import { Q6K_BLOCK_BYTES, q6kCodes, q6kMasks } from './q6k-dot-kernel';
import { quantBlockBytes } from './quant-dot-kernel';

const { add, mul, min, sub, fmul } = scalar;

const I = ValType.i32;
const V = ValType.v128;

/** How one type's blocks are read: values per block, bytes of codes and of f32 scales per block, the decoder. */
interface BlockFormat {
  readonly values: number;
  readonly codeBytes: number;
  readonly scaleBytes: number;
  /**
   * Writes the block's values as f32 at `dst`, from its codes at `codes` and its scales at `scales`; `v` holds
   * scratch v128 locals, `s` scratch f32 locals.
   */
  decode(f: FunctionBuilder, at: BlockAddresses, v: readonly Local[], s: readonly Local[]): void;
}

/** Byte addresses of one block's codes, scales and output. */
interface BlockAddresses {
  readonly codes: Local;
  readonly scales: Local;
  readonly dst: Local;
}

/**
 * Stores the 16 int8 lanes of `bytes` (a local) widened to f32 at dst + offset, each as scale · q − shift (`shift`
 * omitted: scale · q), scale and shift f32x4 locals.
 */
function storeScaled(
  f: FunctionBuilder,
  bytes: Local,
  dst: Local,
  offset: number,
  scale: Local,
  shift?: Local,
): void {
  for (let half = 0; half < 2; half++) {
    const words = simd(half === 0 ? 'i16x8.extend_low_i8x16_s' : 'i16x8.extend_high_i8x16_s', bytes);
    for (let quarter = 0; quarter < 2; quarter++) {
      const ints = simd(quarter === 0 ? 'i32x4.extend_low_i16x8_s' : 'i32x4.extend_high_i16x8_s', words);
      const scaled = simd('f32x4.mul', simd('f32x4.convert_i32x4_s', ints), scale);
      const value = shift === undefined ? scaled : simd('f32x4.sub', scaled, shift);
      f.storeV128(dst, value, offset + 32 * half + 16 * quarter);
    }
  }
}

/** The low (`high` false) or high nibbles of the 16 bytes in `raw`, as bytes 0..15. */
function nibbles(f: FunctionBuilder, raw: Local, high: boolean): Expr {
  return simd('v128.and', high ? simd('i16x8.shr_u', raw, 4) : raw, f.constantBytes(15));
}

/** Q8_0: d · q for 32 int8 codes. */
const Q8_0: BlockFormat = {
  values: 32,
  codeBytes: quantBlockBytes('q8_0'),
  scaleBytes: 4,
  decode(f, { codes, scales, dst }, [raw, scale]) {
    f.set(scale, simdLoad('v128.load32_splat', scales));
    for (let half = 0; half < 2; half++) {
      f.set(raw, simdLoad('v128.load', codes, 16 * half));
      storeScaled(f, raw, dst, 64 * half, scale);
    }
  },
};

/** Q4_0: d · (nibble − 8), values 0-15 from the low nibbles of the 16 bytes and 16-31 from the high ones. */
const Q4_0: BlockFormat = {
  values: 32,
  codeBytes: quantBlockBytes('q4_0'),
  scaleBytes: 4,
  decode(f, { codes, scales, dst }, [raw, scale, shift, nibble]) {
    f.set(scale, simdLoad('v128.load32_splat', scales));
    f.set(shift, simd('f32x4.mul', scale, f.constant(8)));
    f.set(raw, simdLoad('v128.load', codes));
    for (let half = 0; half < 2; half++) {
      f.set(nibble, nibbles(f, raw, half === 1));
      storeScaled(f, nibble, dst, 64 * half, scale, shift);
    }
  },
};

/**
 * Q4_K: value 32s + l of a super-block is d · sc_s · nibble − dmin · m_s, the 6-bit sc_s and m_s in bytes s and 8 + s
 * of the codes, the nibble the low (even s) or high half of byte 16 + 32 (s >> 1) + l (see QuantizedWeight).
 */
const Q4_K: BlockFormat = {
  values: 256,
  codeBytes: Q4K_BLOCK_BYTES,
  scaleBytes: 8,
  decode(f, { codes, scales, dst }, [raw, scale, shift, nibble], [d, dmin]) {
    f.set(d, load('f32.load', scales));
    f.set(dmin, load('f32.load', scales, 4));
    const sixBits = (offset: number) =>
      op('f32.convert_i32_s', op('i32.and', load('i32.load8_u', codes, offset), 63));
    for (let s = 0; s < 8; s++) {
      f.set(scale, simd('f32x4.splat', fmul(d, sixBits(s))));
      f.set(shift, simd('f32x4.splat', fmul(dmin, sixBits(8 + s))));
      for (let half = 0; half < 2; half++) {
        f.set(raw, simdLoad('v128.load', codes, 16 + 32 * (s >> 1) + 16 * half));
        f.set(nibble, nibbles(f, raw, s % 2 === 1));
        storeScaled(f, nibble, dst, 128 * s + 64 * half, scale, shift);
      }
    }
  },
};

/**
 * Q6_K: value v = 128h + 32k + l of a super-block is d · s_(v / 16) · (q − 32), q from the low nibbles and high bit
 * pairs as the dot kernel reads them (q6kCodes), s_i the int8 byte i of the codes.
 */
const Q6_K: BlockFormat = {
  values: 256,
  codeBytes: Q6K_BLOCK_BYTES,
  scaleBytes: 4,
  decode(f, { codes, scales, dst }, [low, high, code, scale], [d]) {
    f.set(d, load('f32.load', scales));
    for (let h = 0; h < 2; h++) {
      for (let k = 0; k < 4; k++) {
        for (let part = 0; part < 2; part++) {
          const subBlock = 8 * h + 2 * k + part;
          f.set(low, simdLoad('v128.load', codes, 16 + 64 * h + 32 * (k & 1) + 16 * part));
          f.set(high, simdLoad('v128.load', codes, 144 + 32 * h + 16 * part));
          f.set(code, q6kCodes(low, high, k, q6kMasks(f), false));
          f.set(
            scale,
            simd('f32x4.splat', fmul(d, op('f32.convert_i32_s', load('i32.load8_s', codes, subBlock)))),
          );
          storeScaled(f, code, dst, 4 * (128 * h + 32 * k + 16 * part), scale);
        }
      }
    }
  },
};

/**
 * bfloat16 and binary16: 8 values from one v128 of 4 packed words (see HalfWeight) and no scales, widened as the dot
 * kernels widen them (widenHalves: even and odd values apart) and stored back in order.
 */
function halfFormat(type: HalfType): BlockFormat {
  return {
    values: HALF_STEP,
    codeBytes: 2 * HALF_STEP,
    scaleBytes: 0,
    decode(f, { codes, dst }, [raw, even, odd]) {
      f.set(raw, simdLoad('v128.load', codes));
      const [evenValues, oddValues] = widenHalves(f, type, raw);
      f.set(even, evenValues);
      f.set(odd, oddValues);
      f.storeV128(dst, shuffle32(even, odd, [0, 4, 1, 5]));
      f.storeV128(dst, shuffle32(even, odd, [2, 6, 3, 7]), 16);
    },
  };
}

/** What W's values are stored as: a block-quantized type or a 16-bit float. */
export type PackedType = QuantType | HalfType;

const FORMATS = {
  q8_0: Q8_0,
  q4_0: Q4_0,
  q4_k: Q4_K,
  q6_k: Q6_K,
  bf16: halfFormat('bf16'),
  f16: halfFormat('f16'),
} as const satisfies Record<PackedType, BlockFormat>;

/** The values, code bytes and scale bytes of one block of `type`. */
export function dequantBlockFormat(
  type: PackedType,
): Pick<BlockFormat, 'values' | 'codeBytes' | 'scaleBytes'> {
  return FORMATS[type];
}

/**
 * A kernel `name`(m, n, blocks, panel, x, scales, codes, out, ldo): out[i, j] = sum_q x[i, q] · W[j, q] for the m rows
 * of x (f32, row-major [m, k], k = blocks · values) against the n rows of a `type` weight (its scales and codes back
 * to back, rows of `blocks` blocks; see QuantizedWeight; a 16-bit weight's words, its scales unread: see HalfWeight),
 * out's rows ldo elements apart. W is decoded to f32 `panel` rows at a time into the calling thread's work area, and
 * each panel multiplied by gemm_few_t's code, so a product of many rows (a prefill) runs at the f32 product's speed
 * whatever the type, and x is not quantized. Pointers in bytes.
 */
function dequantGemmKernel<const N extends string>(name: N, type: PackedType) {
  const format = FORMATS[type];
  return kernel({
    name,
    params: i32('m', 'n', 'blocks', 'panel', 'x', 'scales', 'codes', 'out', 'ldo'),
    emit(f, { m, n, blocks, panel, x, scales, codes, out, ldo, work }, { features }) {
      const [j0, rows, k, b, end, o] = f.locals(I, 6);
      const at = { codes: f.local(I), scales: f.local(I), dst: f.local(I) };
      const v = f.locals(V, 4);
      const s = f.locals(ValType.f32, 2);
      f.set(k, mul(blocks, format.values));
      f.for(j0, 0, n, panel, () => {
        f.set(rows, min(panel, sub(n, j0)));
        f.set(at.codes, add(codes, mul(mul(j0, blocks), format.codeBytes)));
        f.set(at.scales, add(scales, mul(mul(j0, blocks), format.scaleBytes)));
        f.set(at.dst, work);
        // The panel's rows of W are rows · blocks blocks back to back: decoded in order, row-major [rows, k].
        f.set(end, mul(rows, blocks));
        f.for(b, 0, end, 1, () => {
          format.decode(f, at, v, s);
          f.set(at.codes, add(at.codes, format.codeBytes));
          f.set(at.scales, add(at.scales, format.scaleBytes));
          f.set(at.dst, add(at.dst, 4 * format.values));
        });
        f.set(o, add(out, mul(j0, 4)));
        emitGemmFewT(f, { m, n: rows, k, ldo, a: x, w: work, out: o }, features);
      });
    },
  });
}

/** The decoding products, one per packed type (see dequantGemmKernel). */
export const DEQUANT_GEMM = [
  dequantGemmKernel('q8_0_gemm', 'q8_0'),
  dequantGemmKernel('q4_0_gemm', 'q4_0'),
  dequantGemmKernel('q4k_gemm', 'q4_k'),
  dequantGemmKernel('q6k_gemm', 'q6_k'),
  dequantGemmKernel('bf16_gemm', 'bf16'),
  dequantGemmKernel('f16_gemm', 'f16'),
] as const;

const KERNEL_NAMES: Readonly<Record<PackedType, (typeof DEQUANT_GEMM)[number]['name']>> = {
  q8_0: 'q8_0_gemm',
  q4_0: 'q4_0_gemm',
  q4_k: 'q4k_gemm',
  q6_k: 'q6k_gemm',
  bf16: 'bf16_gemm',
  f16: 'f16_gemm',
};

/** The decoding product of `type`. */
export function dequantGemmKernelName(type: PackedType): (typeof DEQUANT_GEMM)[number]['name'] {
  return KERNEL_NAMES[type];
}
