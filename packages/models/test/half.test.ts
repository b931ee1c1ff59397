import { describe, expect, it } from 'vitest';
import { bf16ToF32, f16ToF32, f32ToBf16Bits, f32ToF16Bits } from '../src/half';

describe('float16 and bfloat16', () => {
  it('decodes known binary16 values', () => {
    const bits = Uint16Array.from([
      0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x3555,
    ]);
    const values = f16ToF32(bits);
    expect([...values.subarray(0, 9)]).toEqual([
      1,
      -2,
      65504,
      2 ** -24,
      2 ** -14,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      0,
      -0,
    ]);
    expect(values[9]).toBeCloseTo(1 / 3, 3);
    expect(Number.isNaN(f16ToF32(Uint16Array.of(0x7e00))[0])).toBe(true);
  });

  it('every binary16 value survives f16 -> f32 -> f16 exactly', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const values = f16ToF32(all);
    const wrong: number[] = [];
    for (let bits = 0; bits < 65536; bits++) {
      const back = f32ToF16Bits(values[bits]);
      const same = Number.isNaN(values[bits])
        ? Number.isNaN(f16ToF32(Uint16Array.of(back))[0])
        : back === bits;
      if (!same) wrong.push(bits);
    }
    expect(wrong).toEqual([]);
  });

  it('narrows to binary16 rounding to nearest, ties to even', () => {
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie between 1 and 1+2^-10: even (1)
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie: even (1+2^-9)
    expect(f32ToF16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    expect(f32ToF16Bits(65520)).toBe(0x7c00); // rounds past the largest finite value
    expect(f32ToF16Bits(65519)).toBe(0x7bff);
    expect(f32ToF16Bits(2 ** -25)).toBe(0); // tie between 0 and the smallest subnormal: even (0)
    expect(f32ToF16Bits(1.5 * 2 ** -25)).toBe(1);
    expect(f32ToF16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the normals
    expect(f32ToF16Bits(-1e-10)).toBe(0x8000);
    expect(f32ToF16Bits(Number.NaN) & 0x7c00).toBe(0x7c00);
  });

  it('bfloat16 keeps the top 16 bits, rounding to nearest even', () => {
    expect([...bf16ToF32(Uint16Array.of(0x3f80, 0xc040, 0x7f80))]).toEqual([1, -3, Number.POSITIVE_INFINITY]);
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(f32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // tie: even
    expect(f32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82); // tie: even
    expect(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    expect(f32ToBf16Bits(Number.NaN)).toBe(0x7fc0);
    for (let bits = 0; bits < 65536; bits += 7) {
      const value = bf16ToF32(Uint16Array.of(bits))[0];
      if (!Number.isNaN(value)) expect(f32ToBf16Bits(value)).toBe(bits);
    }
  });
});
