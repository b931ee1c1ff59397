import { QUANT_BLOCK } from '@loom/tensor';
import { type Expr, f32, type Local, lane, op, scalar, shuffle32, simd, simdLoad, v128Zero } from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { type ActivationForm, activationBlockBytes } from './quant-dot-kernel';
import {
  byteShuffle,
  type KQuantType,
  type KQuantXForm,
  X_BYTE_SUMS,
  X_SUMS,
  X_SUPER_BLOCK_BYTES,
} from './super-block-dot';

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

/** The lane-wise maximum of |v| over the eight f32x4 `v`. */
function magnitudes(v: readonly Local[]): Expr {
  const magnitude = (i: number) => simd('f32x4.abs', v[i]);
  return simd(
    'f32x4.pmax',
    max4(magnitude(0), magnitude(1), magnitude(2), magnitude(3)),
    max4(magnitude(4), magnitude(5), magnitude(6), magnitude(7)),
  );
}

/**
 * From m, lane-wise maxima of |x|: the step d = max|x| / 127 into `d` and 1 / d (0 where d = 0) into every lane of
 * `inverse` (m is overwritten).
 */
function scaleOf(f: FunctionBuilder, m: Local, d: Local, inverse: Local): void {
  f.set(m, simd('f32x4.pmax', m, shuffle32(m, m, [2, 3, 0, 1])));
  f.set(m, simd('f32x4.pmax', m, shuffle32(m, m, [1, 0, 3, 2])));
  f.set(d, op('f32.div', lane('f32x4.extract_lane', m, 0), f32(127)));
  const reciprocal = op('select', op('f32.div', f32(1), d), f32(0), op('f32.ne', d, f32(0)));
  f.set(inverse, simd('f32x4.splat', reciprocal));
}

/** Each f32x4 of `v` times `inverse`, rounded to nearest (ties to even) and converted to i32x4, in place. */
function quantizeVectors(f: FunctionBuilder, v: readonly Local[], inverse: Local): void {
  for (const vector of v) {
    f.set(vector, simd('i32x4.trunc_sat_f32x4_s', simd('f32x4.nearest', simd('f32x4.mul', vector, inverse))));
  }
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
        f.set(m, magnitudes(v));
        scaleOf(f, m, d, inverse);
        f.store('f32.store', add(scales, bytes(b)), d);
        quantizeVectors(f, v, inverse);
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

/** Bytes of one super-block of 256 f32 values of x. */
const X_SUPER_BYTES = 1024;

/**
 * A kernel quantizing `blocks` super-blocks of 256 f32 values of x (back to back at `x`) to int8 codes as llama.cpp's
 * Q8_K, for the `type` K-quant kernel reading `form` (see kQuantXForm): d = max|x| / 127 per super-block, q = x ·
 * (1 / d) rounded to nearest, ties to even (0 where d = 0), in f32. Writes d per super-block (f32, at `scales`) and
 * the codes X_SUPER_BLOCK_BYTES apart at `codes`, each group of 32 as the kernel reads it: `i8`, bytes in order, with
 * at X_BYTE_SUMS the i16 sums of each 32 codes (Q4_K's mins) or 16 (Q6_K's offset); `i16`, widened, in X_ORDER for
 * Q4_K and in order for Q6_K, with the i16 sums of each 32 at X_SUMS.
 */
function quantizeSuperXKernel<const N extends string>(name: N, type: KQuantType, form: KQuantXForm) {
  const span = form === 'i8' && type === 'q6_k' ? 16 : QUANT_BLOCK;
  return kernel({
    name,
    params: i32('x', 'blocks', 'codes', 'scales'),
    emit(f, { x, blocks, codes, scales }) {
      const [b, g, xp, gp, cp] = f.locals(I, 5);
      const v = f.locals(V, 8);
      const h = f.locals(V, 4);
      const [m, inverse, total] = f.locals(V, 3);
      const d = f.local(F);
      /** Loads the group of 32 values at x + xp + 128 g into v. */
      const loadGroup = () => {
        f.set(gp, add(xp, mul(g, 128)));
        for (let i = 0; i < 8; i++) f.set(v[i], simdLoad('v128.load', gp, 16 * i));
      };
      /** Stores the sum of the i32 lanes of v[from .. to) as i16 at `at`. */
      const storeSum = (at: Expr, from: number, to: number) => {
        f.set(total, v[from]);
        for (let i = from + 1; i < to; i++) f.set(total, simd('i32x4.add', total, v[i]));
        const sum = add(
          add(lane('i32x4.extract_lane', total, 0), lane('i32x4.extract_lane', total, 1)),
          add(lane('i32x4.extract_lane', total, 2), lane('i32x4.extract_lane', total, 3)),
        );
        f.store('i32.store16', at, sum);
      };
      f.for(b, 0, blocks, 1, () => {
        f.set(xp, add(x, mul(b, X_SUPER_BYTES)));
        f.set(m, v128Zero);
        f.for(g, 0, 8, 1, () => {
          loadGroup();
          f.set(m, simd('f32x4.pmax', m, magnitudes(v)));
        });
        scaleOf(f, m, d, inverse);
        f.store('f32.store', add(scales, bytes(b)), d);
        f.set(cp, add(codes, mul(b, X_SUPER_BLOCK_BYTES)));
        f.for(g, 0, 8, 1, () => {
          loadGroup();
          quantizeVectors(f, v, inverse);
          for (let k = 0; k < 4; k++) f.set(h[k], simd('i16x8.narrow_i32x4_s', v[2 * k], v[2 * k + 1]));
          if (form === 'i8') {
            const at = add(cp, mul(g, QUANT_BLOCK));
            f.storeV128(at, simd('i8x16.narrow_i16x8_s', h[0], h[1]), 0);
            f.storeV128(at, simd('i8x16.narrow_i16x8_s', h[2], h[3]), 16);
          } else {
            const at = add(cp, mul(g, 64));
            // X_ORDER: q[0, 2, .., 14], q[1, 3, .., 15], q[16, 18, .., 30], q[17, 19, .., 31].
            const ordered =
              type === 'q4_k'
                ? [
                    byteShuffle(h[0], h[1], halfLanes(false)),
                    byteShuffle(h[0], h[1], halfLanes(true)),
                    byteShuffle(h[2], h[3], halfLanes(false)),
                    byteShuffle(h[2], h[3], halfLanes(true)),
                  ]
                : h;
            for (const [i, vector] of ordered.entries()) f.storeV128(at, vector, 16 * i);
          }
          const sums = add(cp, form === 'i8' ? X_BYTE_SUMS : X_SUMS);
          if (span === QUANT_BLOCK) storeSum(add(sums, mul(g, 2)), 0, 8);
          else {
            storeSum(add(sums, mul(g, 4)), 0, 4);
            storeSum(add(sums, add(mul(g, 4), 2)), 4, 8);
          }
        });
      });
    },
  });
}

/** The super-block quantizers, one per K-quant type and layout (see quantizeSuperXKernel). */
export const QUANTIZE_SUPER_X = [
  quantizeSuperXKernel('quantize_super_q4k_i16', 'q4_k', 'i16'),
  quantizeSuperXKernel('quantize_super_q4k_i8', 'q4_k', 'i8'),
  quantizeSuperXKernel('quantize_super_q6k_i16', 'q6_k', 'i16'),
  quantizeSuperXKernel('quantize_super_q6k_i8', 'q6_k', 'i8'),
] as const;

/** The kernel that quantizes x's super-blocks for the `type` kernel reading `form`. */
export function quantizeSuperXKernelName(
  type: KQuantType,
  form: KQuantXForm,
): (typeof QUANTIZE_SUPER_X)[number]['name'] {
  return `quantize_super_${type === 'q4_k' ? 'q4k' : 'q6k'}_${form}`;
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
