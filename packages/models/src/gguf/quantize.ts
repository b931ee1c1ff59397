import { f32ToBf16Bits, f32ToF16Bits } from '../half';
import { K_BLOCK, quantizeQ4K, quantizeQ6K } from './k-quants';

/** The types Loom writes besides F32: the block types and the two 16-bit floats (blocks of one value). */
export type QuantizedType = 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K' | 'F16' | 'BF16';

/** Elements per Q8_0 / Q4_0 block. */
export const BLOCK = 32;

/** Elements per block of each type: a row (a matrix's last dimension) must be a multiple of it. */
export const BLOCK_SIZE: Readonly<Record<QuantizedType, number>> = {
  Q8_0: BLOCK,
  Q4_0: BLOCK,
  Q4_K: K_BLOCK,
  Q6_K: K_BLOCK,
  F16: 1,
  BF16: 1,
};

function writeHalf(out: Uint8Array, at: number, value: number): void {
  const bits = f32ToF16Bits(value);
  out[at] = bits & 0xff;
  out[at + 1] = bits >> 8;
}

/** Rounds half away from zero, as C's roundf. */
function roundAway(x: number): number {
  return Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
}

const f32 = Math.fround;

/**
 * Q8_0: per block of 32, d = max|x| / 127 (stored as float16) and q = round(x · (1/d)) in int8, in float32
 * arithmetic as llama.cpp's reference quantizer does, so that both write the same bytes.
 */
function quantizeQ8_0(values: Float32Array): Uint8Array {
  const blocks = values.length / BLOCK;
  const out = new Uint8Array(blocks * 34);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < BLOCK; i++) amax = Math.max(amax, Math.abs(values[b * BLOCK + i]));
    const d = f32(amax / 127);
    const inverse = d === 0 ? 0 : f32(1 / d);
    writeHalf(out, b * 34, d);
    for (let i = 0; i < BLOCK; i++)
      out[b * 34 + 2 + i] = roundAway(f32(values[b * BLOCK + i] * inverse)) & 0xff;
  }
  return out;
}

/** Bytes of one Q4_0 block: the float16 scale, then 16 bytes of two 4-bit levels each. */
export const Q4_0_BLOCK_BYTES = 18;

/**
 * Writes the Q4_0 block at byte `at`: scale d as float16, then byte i holds levels[i] (low half) and levels[i + 16]
 * (high half), each a value in [0, 15] standing for d · (level − 8).
 */
export function writeQ4_0Block(out: Uint8Array, at: number, d: number, levels: ArrayLike<number>): void {
  writeHalf(out, at, d);
  for (let i = 0; i < 16; i++) out[at + 2 + i] = levels[i] | (levels[i + 16] << 4);
}

/**
 * Q4_0: per block of 32, d = m / −8 where m is the value of largest magnitude (so m itself maps to level 0 exactly),
 * q = min(15, ⌊x · (1/d) + 8.5⌋) in float32 arithmetic as llama.cpp's reference quantizer.
 */
function quantizeQ4_0(values: Float32Array): Uint8Array {
  const blocks = values.length / BLOCK;
  const out = new Uint8Array(blocks * Q4_0_BLOCK_BYTES);
  const levels = new Uint8Array(BLOCK);
  for (let b = 0; b < blocks; b++) {
    let extreme = 0;
    for (let i = 0; i < BLOCK; i++) {
      const x = values[b * BLOCK + i];
      if (Math.abs(x) > Math.abs(extreme)) extreme = x;
    }
    const d = f32(extreme / -8);
    const inverse = d === 0 ? 0 : f32(1 / d);
    for (let i = 0; i < BLOCK; i++)
      levels[i] = Math.min(15, Math.max(0, Math.floor(f32(f32(values[b * BLOCK + i] * inverse) + 8.5))));
    writeQ4_0Block(out, b * Q4_0_BLOCK_BYTES, d, levels);
  }
  return out;
}

/** Each value as its nearest 16-bit pattern, little-endian. */
function halves(values: Float32Array, bits: (value: number) => number): Uint8Array {
  return new Uint8Array(Uint16Array.from(values, bits).buffer);
}

/** The blocks of `values` (a multiple of the type's block size long) in a quantized type. */
export function quantize(values: Float32Array, type: QuantizedType): Uint8Array {
  if (values.length % BLOCK_SIZE[type] !== 0) {
    throw new Error(`quantize: ${values.length} values are not whole ${type} blocks of ${BLOCK_SIZE[type]}`);
  }
  switch (type) {
    case 'Q8_0':
      return quantizeQ8_0(values);
    case 'Q4_0':
      return quantizeQ4_0(values);
    case 'Q4_K':
      return quantizeQ4K(values);
    case 'Q6_K':
      return quantizeQ6K(values);
    case 'F16':
      return halves(values, f32ToF16Bits);
    case 'BF16':
      return halves(values, f32ToBf16Bits);
  }
}
