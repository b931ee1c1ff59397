import { GELU_C, GELU_CUBIC } from '../gelu-formula';
import { type Expr, f32x4, type Local, type Operand, op, simd, simdLoad } from './expr';
import type { FunctionBuilder } from './function-builder';
import type { ModuleBuilder } from './module-builder';
import { ValType } from './opcodes';

/** Exported names of the activation kernels. */
export const ACTIVATION_KERNELS = { gelu: 'gelu_f32', geluGrad: 'gelu_grad_f32' } as const;

/**
 * Parameters, in order: byte addresses of the inputs and of the output, then the element count,
 * a multiple of 4 (the caller finishes the tail).
 */
export const GELU_PARAMS = ['x', 'out', 'n'] as const;
export const GELU_GRAD_PARAMS = ['x', 'grad', 'out', 'n'] as const;

/** exp is evaluated on [EXP_MIN, EXP_MAX]: 2^k stays a normal f32 and e^88 is finite. */
const EXP_MIN = -87;
const EXP_MAX = 88;
/**
 * The gradient kernel clamps x to ±GRAD_CLAMP_X first: beyond it the slope is exactly 0 or 1 in
 * f32, and x² cannot overflow into 0 · ∞.
 */
const GRAD_CLAMP_X = 1000;
/** ln 2 split so that k · LN2_HI is exact for |k| < 2^15. */
const LN2_HI = 0.693359375;
const LN2_LO = Math.LN2 - LN2_HI;
/** Taylor coefficients of e^r, highest first: 1/7! ... 1/0!; |r| <= ln2 / 2 keeps the error near 1 ulp. */
const EXP_TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1, 1];

const add = (a: Operand, b: Operand): Expr => simd('f32x4.add', a, b);
const sub = (a: Operand, b: Operand): Expr => simd('f32x4.sub', a, b);
const mul = (a: Operand, b: Operand): Expr => simd('f32x4.mul', a, b);
const div = (a: Operand, b: Operand): Expr => simd('f32x4.div', a, b);

/**
 * result = e^z on four lanes: z clamped to [EXP_MIN, EXP_MAX] (NaN stays NaN), k = round(z / ln2),
 * r = z - k ln2, e^z = 2^k · p(r) with 2^k built in the exponent bits; +Infinity above EXP_MAX.
 * Overwrites `z` and `k`.
 */
function emitExp(f: FunctionBuilder, z: Local, k: Local, result: Local): void {
  const overflow = f.local(ValType.v128);
  f.set(overflow, simd('f32x4.gt', z, f32x4(EXP_MAX)));
  f.set(z, simd('f32x4.min', simd('f32x4.max', z, f32x4(EXP_MIN)), f32x4(EXP_MAX)));
  f.set(k, simd('f32x4.nearest', mul(z, f32x4(Math.LOG2E))));
  f.set(z, sub(sub(z, mul(k, f32x4(LN2_HI))), mul(k, f32x4(LN2_LO))));
  const [first, ...rest] = EXP_TAYLOR;
  const poly = rest.reduce<Expr>((p, c) => add(mul(p, z), f32x4(c)), f32x4(first));
  const exponent = simd('i32x4.add', simd('i32x4.trunc_sat_f32x4_s', k), simd('i32x4.splat', 127));
  f.set(result, mul(poly, simd('i32x4.shl', exponent, 23)));
  f.set(result, simd('v128.bitselect', f32x4(Number.POSITIVE_INFINITY), result, overflow));
}

/** A loop over `n` elements (a multiple of 4) of `out`, four at a time; `body` stores one vector at `out`. */
function vectorLoop(
  f: FunctionBuilder,
  out: Local,
  n: Local,
  pointers: readonly Local[],
  body: () => void,
): void {
  const end = f.local(ValType.i32);
  f.set(end, op('i32.add', out, op('i32.shl', n, 2)));
  f.block((done) => {
    f.brIf(done, op('i32.ge_u', out, end));
    f.loop((again) => {
      body();
      for (const p of [...pointers, out]) f.set(p, op('i32.add', p, 16));
      f.brIf(again, op('i32.lt_u', out, end));
    });
  });
}

/**
 * GELU in its tanh form, as x · sigmoid(2z) with z = c (x + 0.044715 x³), and its gradient
 * grad · s (1 + (1 - s) x (2c + 6 · 0.044715 c x²)) with s = sigmoid(2z).
 */
export function emitActivations(mod: ModuleBuilder): void {
  const I = ValType.i32;
  const V = ValType.v128;
  const minusTwoZ = (f: FunctionBuilder, x: Local, into: Local) => {
    f.set(into, mul(x, add(f32x4(-2 * GELU_C), mul(f32x4(-2 * GELU_C * GELU_CUBIC), mul(x, x)))));
  };
  mod.func(
    ACTIVATION_KERNELS.gelu,
    GELU_PARAMS.map(() => I),
    (f) => {
      const [x, out, n] = f.params;
      const [v, z, k, e] = f.locals(V, 4);
      vectorLoop(f, out, n, [x], () => {
        f.set(v, simdLoad('v128.load', x));
        minusTwoZ(f, v, z);
        emitExp(f, z, k, e);
        f.storeV128(out, div(v, add(f32x4(1), e)));
      });
    },
  );
  mod.func(
    ACTIVATION_KERNELS.geluGrad,
    GELU_GRAD_PARAMS.map(() => I),
    (f) => {
      const [x, grad, out, n] = f.params;
      const [v, z, k, e, s] = f.locals(V, 5);
      vectorLoop(f, out, n, [x, grad], () => {
        f.set(
          v,
          simd(
            'f32x4.min',
            simd('f32x4.max', simdLoad('v128.load', x), f32x4(-GRAD_CLAMP_X)),
            f32x4(GRAD_CLAMP_X),
          ),
        );
        minusTwoZ(f, v, z);
        emitExp(f, z, k, e);
        f.set(s, div(f32x4(1), add(f32x4(1), e)));
        const slope = add(f32x4(2 * GELU_C), mul(f32x4(6 * GELU_C * GELU_CUBIC), mul(v, v)));
        const factor = add(f32x4(1), mul(sub(f32x4(1), s), mul(v, slope)));
        f.storeV128(out, mul(simdLoad('v128.load', grad), mul(s, factor)));
      });
    },
  );
}
