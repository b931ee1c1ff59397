import { type Expr, f32, type Local, lane, op, scalar, shuffle32, simd, simdLoad, v128Zero } from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { type ActivationForm, activationBlockBytes } from './quant-dot-kernel';
import { byteShuffle } from './super-block-dot';

const { add, mul, bytes } = scalar;

const I = ValType.i32;
const V = ValType.v128;
const F = ValType.f32;

/** Bytes of one block of 32 f32 values of x. */
const X_BLOCK_BYTES = 128;

/** The bytes of 16-bit lanes 0, 2, 4, 6 (`odd` 1, 3, 5, 7) of each of two vectors, as i8x16.shuffle indices. */
function halfLanes(odd: boolean): number[] {
  return Array.from({ length: 8 }, (_, i) => 4 * i + (odd ? 2 : 0)).flatMap((b) => [b, b + 1]);
}

/** The element-wise maximum of four f32x4 (p-max: the inputs are magnitudes, never NaN for finite x). */
function max4(a: Expr, b: Expr, c: Expr, d: Expr): Expr {
  return simd('f32x4.pmax', simd('f32x4.pmax', a, b), simd('f32x4.pmax', c, d));
}

/**
 * Stores the codes of one block, 32 i16 values in order in `h` (4 × i16x8), at address `at` in `form` (see
 * ActivationForm).
 */
function storeCodes(f: FunctionBuilder, form: ActivationForm, at: Local, h: readonly Local[]): void {
  const [h0, h1, h2, h3] = h;
  if (form === 'i16') {
    for (const [i, v] of h.entries()) f.storeV128(at, v, 16 * i);
  } else if (form === 'i16-nibbles') {
    // q[0, 2, .., 14], q[16, 18, .., 30], q[1, 3, .., 15], q[17, 19, .., 31].
    f.storeV128(at, byteShuffle(h0, h1, halfLanes(false)), 0);
    f.storeV128(at, byteShuffle(h2, h3, halfLanes(false)), 16);
    f.storeV128(at, byteShuffle(h0, h1, halfLanes(true)), 32);
    f.storeV128(at, byteShuffle(h2, h3, halfLanes(true)), 48);
  } else if (form === 'i8') {
    f.storeV128(at, simd('i8x16.narrow_i16x8_s', h0, h1), 0);
    f.storeV128(at, simd('i8x16.narrow_i16x8_s', h2, h3), 16);
  } else {
    // max(q, 0) then max(-q, 0): the unsigned narrowing saturates negative lanes to 0.
    const negated = (v: Local) => simd('i16x8.sub', v128Zero, v);
    f.storeV128(at, simd('i8x16.narrow_i16x8_u', h0, h1), 0);
    f.storeV128(at, simd('i8x16.narrow_i16x8_u', h2, h3), 16);
    f.storeV128(at, simd('i8x16.narrow_i16x8_u', negated(h0), negated(h1)), 32);
    f.storeV128(at, simd('i8x16.narrow_i16x8_u', negated(h2), negated(h3)), 48);
  }
}

/**
 * A kernel quantizing `blocks` blocks of 32 f32 values of x (back to back at `x`) to int8 codes as llama.cpp does for
 * its Q8_0 dot products, in f32: d = max|x| / 127, q = x · (1 / d) rounded to nearest, ties to even (0 where d = 0).
 * Writes the codes laid out as `form` (activationBlockBytes apart), d per block (f32, at `scales`) and -2 · sum(q) per
 * block (i32, at `bias`; Q4_0's offset).
 */
function quantizeXKernel<const N extends string>(name: N, form: ActivationForm) {
  return kernel({
    name,
    params: i32('x', 'blocks', 'codes', 'scales', 'bias'),
    emit(f, { x, blocks, codes, scales, bias }) {
      const [b, xp, cp] = f.locals(I, 3);
      const v = f.locals(V, 8);
      const h = f.locals(V, 4);
      const [m, inverse] = f.locals(V, 2);
      const d = f.local(F);
      f.for(b, 0, blocks, 1, () => {
        f.set(xp, add(x, mul(b, X_BLOCK_BYTES)));
        for (let i = 0; i < 8; i++) f.set(v[i], simdLoad('v128.load', xp, 16 * i));
        const magnitude = (i: number) => simd('f32x4.abs', v[i]);
        f.set(
          m,
          simd(
            'f32x4.pmax',
            max4(magnitude(0), magnitude(1), magnitude(2), magnitude(3)),
            max4(magnitude(4), magnitude(5), magnitude(6), magnitude(7)),
          ),
        );
        f.set(m, simd('f32x4.pmax', m, shuffle32(m, m, [2, 3, 0, 1])));
        f.set(m, simd('f32x4.pmax', m, shuffle32(m, m, [1, 0, 3, 2])));
        f.set(d, op('f32.div', lane('f32x4.extract_lane', m, 0), f32(127)));
        f.store('f32.store', add(scales, bytes(b)), d);
        const reciprocal = op('select', op('f32.div', f32(1), d), f32(0), op('f32.ne', d, f32(0)));
        f.set(inverse, simd('f32x4.splat', reciprocal));
        for (let i = 0; i < 8; i++) {
          f.set(
            v[i],
            simd('i32x4.trunc_sat_f32x4_s', simd('f32x4.nearest', simd('f32x4.mul', v[i], inverse))),
          );
        }
        const sum = (i: number, j: number) => simd('i32x4.add', v[i], v[j]);
        f.set(
          m,
          simd('i32x4.add', simd('i32x4.add', sum(0, 1), sum(2, 3)), simd('i32x4.add', sum(4, 5), sum(6, 7))),
        );
        const total = add(
          add(lane('i32x4.extract_lane', m, 0), lane('i32x4.extract_lane', m, 1)),
          add(lane('i32x4.extract_lane', m, 2), lane('i32x4.extract_lane', m, 3)),
        );
        f.store('i32.store', add(bias, bytes(b)), mul(total, -2));
        for (let k = 0; k < 4; k++) f.set(h[k], simd('i16x8.narrow_i32x4_s', v[2 * k], v[2 * k + 1]));
        f.set(cp, add(codes, mul(b, activationBlockBytes(form))));
        storeCodes(f, form, cp, h);
      });
    },
  });
}

/** The activation quantizers, one per layout of the codes (see ActivationForm). */
export const QUANTIZE_X = [
  quantizeXKernel('quantize_x_i16', 'i16'),
  quantizeXKernel('quantize_x_i16_nibbles', 'i16-nibbles'),
  quantizeXKernel('quantize_x_i8', 'i8'),
  quantizeXKernel('quantize_x_split', 'split'),
] as const;

/** The kernel that quantizes x into `form`. */
export function quantizeXKernelName(form: ActivationForm): (typeof QUANTIZE_X)[number]['name'] {
  if (form === 'i16') return 'quantize_x_i16';
  if (form === 'i16-nibbles') return 'quantize_x_i16_nibbles';
  return form === 'i8' ? 'quantize_x_i8' : 'quantize_x_split';
}
