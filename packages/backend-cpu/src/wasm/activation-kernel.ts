import { GELU_C, GELU_CUBIC } from '../gelu-formula';
import { type Local, type Operand, op, simd, simdLoad } from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { add, clamp, div, emitExp, emitExpClamped, mul, sub } from './vector-exp';

/**
 * The kernels clamp x to ±CLAMP_X first (GELU only from below): beyond it the slope is exactly 1 in f32,
 * or below 1e-35 in magnitude (|2z| exceeds the range of `emitExpClamped` there), and x² cannot
 * overflow into 0 · ∞.
 */
const CLAMP_X = 10;
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

/** Registers of a kernel body: the loaded input and the scratch of `emitExp` / `emitExpClamped`. */
interface Registers {
  readonly v: Local;
  readonly z: Local;
  readonly k: Local;
  readonly e: Local;
}

/** e = exp(-v), for the logistic function 1 / (1 + e). */
function expOfNegated(f: FunctionBuilder, r: Registers): void {
  f.set(r.z, sub(f.constant(0), r.v));
  emitExp(f, r.z, r.k, r.e);
}

const V = ValType.v128;

/**
 * A kernel over `n` elements (a multiple of 4, the caller finishes the tail) of x: out = body.
 * Parameters: byte addresses of x and of the output, the element count.
 */
function unary<const N extends string>(name: N, body: (f: FunctionBuilder, r: Registers) => Operand) {
  return kernel({
    name,
    params: i32('x', 'out', 'n'),
    emit(f, { x, out, n }) {
      const [v, z, k, e] = f.locals(V, 4);
      vectorLoop(f, out, n, [x], () => {
        f.set(v, simdLoad('v128.load', x));
        f.storeV128(out, body(f, { v, z, k, e }));
      });
    },
  });
}

/** -2z of GELU's tanh form, z = c (x + 0.044715 x³), into `into`. */
function minusTwoZ(f: FunctionBuilder, x: Local, into: Local): void {
  f.set(into, mul(x, add(f.constant(-2 * GELU_C), mul(f.constant(-2 * GELU_C * GELU_CUBIC), mul(x, x)))));
}

/** e^x. */
export const EXP = unary('exp_f32', (f, r) => {
  f.set(r.z, r.v);
  emitExp(f, r.z, r.k, r.e);
  return r.e;
});

/** The logistic function 1 / (1 + e^-x). */
export const SIGMOID = unary('sigmoid_f32', (f, r) => {
  expOfNegated(f, r);
  return div(f.constant(1), add(f.constant(1), r.e));
});

/** SiLU x / (1 + e^-x). */
export const SILU = unary('silu_f32', (f, r) => {
  expOfNegated(f, r);
  return div(r.v, add(f.constant(1), r.e));
});

/**
 * GELU in its tanh form, as x · sigmoid(2z) with z = c (x + 0.044715 x³); x is raised to
 * -CLAMP_X first (below it GELU is under 1e-36 in magnitude), so a huge negative x is not
 * divided by the clamped e^87 alone.
 */
export const GELU = unary('gelu_f32', (f, r) => {
  f.set(r.v, simd('f32x4.pmax', r.v, f.constant(-CLAMP_X)));
  minusTwoZ(f, r.v, r.z);
  emitExpClamped(f, r.z, r.k, r.e);
  return div(r.v, add(f.constant(1), r.e));
});

/**
 * SwiGLU's forward silu(gate) · up over `n` elements (a multiple of 4). Parameters: byte
 * addresses of gate, up and the output, the element count.
 */
export const SWIGLU = kernel({
  name: 'swiglu_f32',
  params: i32('gate', 'up', 'out', 'n'),
  emit(f, { gate, up, out, n }) {
    const [v, z, k, e] = f.locals(V, 4);
    vectorLoop(f, out, n, [gate, up], () => {
      f.set(v, simdLoad('v128.load', gate));
      expOfNegated(f, { v, z, k, e });
      f.storeV128(out, mul(div(v, add(f.constant(1), e)), simdLoad('v128.load', up)));
    });
  },
});

/**
 * GELU's gradient grad · s (1 + (1 - s) x (2c + 6 · 0.044715 c x²)) with s = sigmoid(2z) over
 * `n` elements (a multiple of 4). Parameters: byte addresses of x, grad and the output, the
 * element count.
 */
export const GELU_GRAD = kernel({
  name: 'gelu_grad_f32',
  params: i32('x', 'grad', 'out', 'n'),
  emit(f, { x, grad, out, n }) {
    const [v, z, k, e, s] = f.locals(V, 5);
    vectorLoop(f, out, n, [x, grad], () => {
      f.set(v, clamp(f, simdLoad('v128.load', x), -CLAMP_X, CLAMP_X));
      minusTwoZ(f, v, z);
      emitExpClamped(f, z, k, e);
      f.set(s, div(f.constant(1), add(f.constant(1), e)));
      const slope = add(f.constant(2 * GELU_C), mul(f.constant(6 * GELU_C * GELU_CUBIC), mul(v, v)));
      const factor = add(f.constant(1), mul(sub(f.constant(1), s), mul(v, slope)));
      f.storeV128(out, mul(simdLoad('v128.load', grad), mul(s, factor)));
    });
  },
});

/**
 * SwiGLU's gate gradient grad · up · silu'(gate) over `n` elements (a multiple of 4); the up
 * gradient grad · silu(gate) is `SWIGLU` run on (gate, grad). With e = e^-gate unclamped (+∞ or 0
 * past the range of f32) and s = 1 / (1 + e): silu' = s + gate · s · (1 - s), where 1 - s is
 * e · s (no cancellation as s nears 1), capped at 1 because e = ∞ makes it ∞ · 0. So the slope
 * reaches its limits exactly: 1 above, 0 below. Parameters: byte addresses of gate, up, grad and
 * the output, the element count.
 */
export const SWIGLU_GRAD = kernel({
  name: 'swiglu_grad_f32',
  params: i32('gate', 'up', 'grad', 'out', 'n'),
  emit(f, { gate, up, grad, out, n }) {
    const [v, z, k, e, s] = f.locals(V, 5);
    vectorLoop(f, out, n, [gate, up, grad], () => {
      f.set(v, simdLoad('v128.load', gate));
      expOfNegated(f, { v, z, k, e });
      f.set(s, div(f.constant(1), add(f.constant(1), e)));
      const oneMinusS = simd('f32x4.pmin', f.constant(1), mul(e, s));
      const slope = add(s, mul(mul(v, s), oneMinusS));
      const upGrad = mul(simdLoad('v128.load', grad), simdLoad('v128.load', up));
      f.storeV128(out, mul(upGrad, slope));
    });
  },
});

/** The activation kernels, in the module's order. */
export const ACTIVATIONS = [GELU, GELU_GRAD, EXP, SIGMOID, SILU, SWIGLU, SWIGLU_GRAD] as const;

/** Exported names of the activation kernels. */
export const ACTIVATION_KERNELS = {
  gelu: GELU.name,
  geluGrad: GELU_GRAD.name,
  exp: EXP.name,
  sigmoid: SIGMOID.name,
  silu: SILU.name,
  swiglu: SWIGLU.name,
  swigluGrad: SWIGLU_GRAD.name,
} as const;
