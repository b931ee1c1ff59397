import { tensor } from './creation';
import { where } from './elementwise';
import { f32ToBf16Bits, f32ToF16Bits, type HalfType } from './half';
import { gather } from './indexing';
import { digits } from './quantized-weight';
import { scope } from './scope';
import { showShape } from './shape';
import type { Tensor } from './tensor';

export type { HalfType };

/** Exponent and fraction bits of each format (the sign is the top bit). */
const FORMAT: Readonly<Record<HalfType, { readonly exponentBits: number; readonly fractionBits: number }>> = {
  f16: { exponentBits: 5, fractionBits: 10 },
  bf16: { exponentBits: 8, fractionBits: 7 },
};

/**
 * A weight [out, in] held at 16 bits: `packed` i32 [out, in / 2], word j of a row holding values 2j (low half) and
 * 2j + 1 (high half): the little-endian bytes of an F16 / BF16 tensor in a safetensors or GGUF file, read as words.
 * Half the bytes of an f32 weight; a product reads it through `halfMatmul`, widening each value as it goes.
 * Only finite values are meaningful (loaders refuse a tensor with an infinity or NaN).
 */
export class HalfWeight {
  readonly type: HalfType;
  readonly packed: Tensor;

  constructor(type: HalfType, packed: Tensor) {
    checkHalf('HalfWeight', type, packed);
    this.type = type;
    this.packed = packed;
  }

  /** The logical shape [out, in] of the weight. */
  get shape(): [number, number] {
    return [this.packed.shape[0], this.packed.shape[1] * 2];
  }

  /** Bytes of backend storage the weight holds. */
  get bytes(): number {
    return 4 * this.packed.size;
  }

  dispose(): void {
    this.packed.dispose();
  }
}

/** Throws unless `packed` is an i32 [out, in / 2] tensor holding a weight of `type`. */
export function checkHalf(op: string, type: HalfType, packed: Tensor): void {
  if (type !== 'f16' && type !== 'bf16') {
    throw new Error(`${op}: unknown 16-bit type ${String(type)}; expected 'f16' or 'bf16'`);
  }
  if (packed.dtype !== 'i32' || packed.rank !== 2) {
    throw new Error(
      `${op}: expected packed i32 [out, in / 2] (two 16-bit values per word), got ${packed.dtype} ${showShape(packed.shape)}`,
    );
  }
}

/** Packs float values (an even count per row) into the words of a HalfWeight, rounding each to nearest even. */
export function packHalves(type: HalfType, values: ArrayLike<number>): Int32Array {
  const bits = type === 'f16' ? f32ToF16Bits : f32ToBf16Bits;
  if (values.length % 2 !== 0) {
    throw new Error(`packHalves: ${values.length} values do not fill whole words of two ${type} values`);
  }
  const words = new Int32Array(values.length / 2);
  for (let j = 0; j < words.length; j++) words[j] = bits(values[2 * j]) | (bits(values[2 * j + 1]) << 16);
  return words;
}

/**
 * The weight widened to f32 [out, in], written with primitives (the composite the kernels are checked against):
 * each 16-bit pattern split into sign, exponent e and fraction m, then (e = 0 ? m / 2^f : 1 + m / 2^f) · 2^(e - bias)
 * with the power of two gathered from a table (exact: every step is a product of exactly representable values).
 */
export function unpackHalves(type: HalfType, packed: Tensor): Tensor {
  return scope(() => {
    const [out, words] = packed.shape;
    const { exponentBits, fractionBits } = FORMAT[type];
    const both = digits(packed, 65536, 2); // [out, words, 2]: the unsigned 16-bit values 2j, 2j + 1
    const magnitude = where(both.ge(32768), both.sub(32768), both);
    const scale = 2 ** fractionBits;
    const exponent = magnitude.div(scale); // [out, words, 2], 0 .. 2^exponentBits - 1
    const fraction = magnitude.sub(exponent.mul(scale)).cast('f32').div(scale);
    const bias = 2 ** (exponentBits - 1) - 1;
    const powers = Array.from({ length: 2 ** exponentBits }, (_, e) => 2 ** (Math.max(e, 1) - bias));
    const power = gather(
      tensor(Float32Array.from(powers), [powers.length], { backend: packed.backend }),
      exponent,
    );
    const significand = where(exponent.eq(0), fraction, fraction.add(1));
    const value = significand.mul(power);
    return where(both.ge(32768), value.neg(), value).reshape([out, words * 2]); // [out, in]
  });
}
