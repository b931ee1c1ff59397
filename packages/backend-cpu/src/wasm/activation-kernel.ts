import { GELU_C, GELU_CUBIC } from '../gelu-formula';
import { f32x4, type Local, type Operand, op, simd, simdLoad } from './expr';
import type { FunctionBuilder } from './function-builder';
import type { ModuleBuilder } from './module-builder';
import { ValType } from './opcodes';
import { add, div, emitExp, mul, sub } from './vector-exp';

/** Exported names of the activation kernels. */
export const ACTIVATION_KERNELS = {
  gelu: 'gelu_f32',
  geluGrad: 'gelu_grad_f32',
  exp: 'exp_f32',
  sigmoid: 'sigmoid_f32',
  silu: 'silu_f32',
  swiglu: 'swiglu_f32',
} as const;

/**
 * Parameters, in order: byte addresses of the inputs and of the output, then the element count,
 * a multiple of 4 (the caller finishes the tail). gelu, exp, sigmoid and silu take UNARY_PARAMS;
 * geluGrad and swiglu BINARY_PARAMS (x and grad, or gate and up).
 */
export const UNARY_PARAMS = ['x', 'out', 'n'] as const;
export const BINARY_PARAMS = ['a', 'b', 'out', 'n'] as const;

/**
 * The gradient kernel clamps x to ±GRAD_CLAMP_X first: beyond it the slope is exactly 0 or 1 in
 * f32, and x² cannot overflow into 0 · ∞.
 */
const GRAD_CLAMP_X = 1000;
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

/** Registers of a kernel body: the loaded input and the scratch of `emitExp`. */
interface Registers {
  readonly v: Local;
  readonly z: Local;
  readonly k: Local;
  readonly e: Local;
}

/** e = exp(-v), for the logistic function 1 / (1 + e). */
function expOfNegated(f: FunctionBuilder, r: Registers): void {
  f.set(r.z, sub(f32x4(0), r.v));
  emitExp(f, r.z, r.k, r.e);
}

/**
 * GELU in its tanh form, as x · sigmoid(2z) with z = c (x + 0.044715 x³), and its gradient
 * grad · s (1 + (1 - s) x (2c + 6 · 0.044715 c x²)) with s = sigmoid(2z); exp; sigmoid
 * 1 / (1 + e^-x); SiLU x / (1 + e^-x); SwiGLU's forward silu(gate) · up.
 */
export function emitActivations(mod: ModuleBuilder): void {
  const I = ValType.i32;
  const V = ValType.v128;
  const unary = (name: string, body: (f: FunctionBuilder, r: Registers) => Operand) =>
    mod.func(
      name,
      UNARY_PARAMS.map(() => I),
      (f) => {
        const [x, out, n] = f.params;
        const [v, z, k, e] = f.locals(V, 4);
        vectorLoop(f, out, n, [x], () => {
          f.set(v, simdLoad('v128.load', x));
          f.storeV128(out, body(f, { v, z, k, e }));
        });
      },
    );
  unary(ACTIVATION_KERNELS.exp, (f, r) => {
    f.set(r.z, r.v);
    emitExp(f, r.z, r.k, r.e);
    return r.e;
  });
  unary(ACTIVATION_KERNELS.sigmoid, (f, r) => {
    expOfNegated(f, r);
    return div(f32x4(1), add(f32x4(1), r.e));
  });
  unary(ACTIVATION_KERNELS.silu, (f, r) => {
    expOfNegated(f, r);
    return div(r.v, add(f32x4(1), r.e));
  });
  mod.func(
    ACTIVATION_KERNELS.swiglu,
    BINARY_PARAMS.map(() => I),
    (f) => {
      const [gate, up, out, n] = f.params;
      const [v, z, k, e] = f.locals(V, 4);
      vectorLoop(f, out, n, [gate, up], () => {
        f.set(v, simdLoad('v128.load', gate));
        expOfNegated(f, { v, z, k, e });
        f.storeV128(out, mul(div(v, add(f32x4(1), e)), simdLoad('v128.load', up)));
      });
    },
  );
  const minusTwoZ = (f: FunctionBuilder, x: Local, into: Local) => {
    f.set(into, mul(x, add(f32x4(-2 * GELU_C), mul(f32x4(-2 * GELU_C * GELU_CUBIC), mul(x, x)))));
  };
  unary(ACTIVATION_KERNELS.gelu, (f, r) => {
    minusTwoZ(f, r.v, r.z);
    emitExp(f, r.z, r.k, r.e);
    return div(r.v, add(f32x4(1), r.e));
  });
  mod.func(
    ACTIVATION_KERNELS.geluGrad,
    BINARY_PARAMS.map(() => I),
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
