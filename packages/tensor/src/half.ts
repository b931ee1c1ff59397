/**
 * Conversions between float32 and the 16-bit float formats of checkpoint files: IEEE 754 binary16 (F16) and
 * bfloat16 (BF16, the top half of a float32). Narrowing rounds to nearest, ties to even.
 */

/** The 16-bit float formats a weight may be held in: IEEE binary16 (`f16`) and bfloat16 (`bf16`). */
export type HalfType = 'f16' | 'bf16';

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

let f16Table: Float32Array | undefined;

/** The float32 value of every binary16 bit pattern (built on first use). */
function halfTable(): Float32Array {
  if (f16Table === undefined) {
    f16Table = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) {
      const sign = bits & 0x8000 ? -1 : 1;
      const exponent = (bits >> 10) & 0x1f;
      const fraction = bits & 0x3ff;
      if (exponent === 0) f16Table[bits] = sign * fraction * 2 ** -24;
      else if (exponent === 31)
        f16Table[bits] = fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
      else f16Table[bits] = sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
    }
  }
  return f16Table;
}

/** The float32 values of binary16 bit patterns. */
export function f16ToF32(bits: Uint16Array): Float32Array {
  const table = halfTable();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]];
  return out;
}

/** The float32 values of bfloat16 bit patterns (exact: a bfloat16 is the top half of a float32). */
export function bf16ToF32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i] << 16;
  return out;
}

/** The binary16 bit pattern nearest to `value` (overflow gives infinity, NaN stays NaN). */
export function f32ToF16Bits(value: number): number {
  scratch[0] = value;
  const bits = scratchBits[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa === 0 ? 0 : 0x200);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const kept = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    return sign | (rest > half || (rest === half && kept & 1) ? kept + 1 : kept);
  }
  const kept = (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  return sign | (rest > 0x1000 || (rest === 0x1000 && kept & 1) ? kept + 1 : kept);
}

/** The bfloat16 bit pattern nearest to `value` (NaN stays a quiet NaN). */
export function f32ToBf16Bits(value: number): number {
  scratch[0] = value;
  const bits = scratchBits[0];
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) & 0x8000) | 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}
