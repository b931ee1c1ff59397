import { GELU_C, GELU_CUBIC } from '../gelu-formula';
import { type KernelFeatures, type Local, type Operand, op, simd, simdLoad } from './expr';
import type { FunctionBuilder } from './function-builder';
import { i32, kernel } from './kernel-spec';
import { ValType } from './opcodes';
import { touchAhead } from './touch-ahead';
import { add, clamp, div, emitExp, emitExpClamped, mul, sub } from './vector-exp';

/**
 * The kernels clamp x to ±CLAMP_X first (GELU only from below): beyond it the slope is exactly 1 in f32,
 * or below 1e-35 in magnitude (|2z| exceeds the range of `emitExpClamped` there), and x² cannot
 * overflow into 0 · ∞.
 */
const CLAMP_X = 10;
/**
 * Vectors a pass of the element-wise loops, their statements interleaved (`FunctionBuilder.interleave`): an exp is
 * one long chain of dependent operations, and one vector a pass left the core waiting on it. [768, 512], one
 * thread, Node 20, against one vector a pass (two a pass in brackets): GELU 462-493 -> 418-434 us (436-453), its
 * gradient 679-696 -> 522-524 (594-638), SwiGLU 584-618 -> 483-490 (541-545), its gate's gradient 717-756 ->
 * 584-593 (635-650). Four copies' registers outnumber x64's 16 vector registers; the constants wait on the stack.
 */
const UNROLL = 4;

/**
 * A loop over `n` elements (a multiple of 4) of `out`: UNROLL vectors a pass while a whole pass fits, their
 * statements interleaved and the inputs touched ahead (`touchAhead`), then one vector a pass; `body(copy, offset)`
 * stores one vector at byte `offset` from `out`, reading its inputs at the same offset from `pointers`, in registers
 * of its own for each `copy`.
 */
function vectorLoop(
  f: FunctionBuilder,
  out: Local,
  n: Local,
  pointers: readonly Local[],
  body: (copy: number, offset: number) => void,
): void {
  const [end, passEnd, ahead] = f.locals(ValType.i32, 3);
  f.set(end, op('i32.add', out, op('i32.shl', n, 2)));
  f.set(passEnd, op('i32.add', out, op('i32.and', op('i32.shl', n, 2), -16 * UNROLL)));
  const pass = (bound: Local, vectors: number) =>
    f.block((done) => {
      f.brIf(done, op('i32.ge_u', out, bound));
      f.loop((again) => {
        if (vectors > 1) touchAhead(f, ahead, out, end, pointers);
        if (vectors === 1) body(0, 0);
        else f.interleave(vectors, (copy) => body(copy, 16 * copy));
        for (const p of [...pointers, out]) f.set(p, op('i32.add', p, 16 * vectors));
        f.brIf(again, op('i32.lt_u', out, bound));
      });
    });
  pass(passEnd, UNROLL);
  pass(end, 1);
}

/** Registers of a kernel body: the loaded input and the scratch of `emitExp` / `emitExpClamped`. */
interface Registers {
  readonly v: Local;
  readonly z: Local;
  readonly k: Local;
  readonly e: Local;
  /** A second result (a logistic function's value). */
  readonly s: Local;
}

/** One set of registers for each copy of a pass of `vectorLoop`. */
function registers(f: FunctionBuilder): Registers[] {
  return Array.from({ length: UNROLL }, () => {
    const [v, z, k, e, s] = f.locals(ValType.v128, 5);
    return { v, z, k, e, s };
  });
}

/** e = exp(-v), for the logistic function 1 / (1 + e). */
function expOfNegated(f: FunctionBuilder, r: Registers, features: KernelFeatures): void {
  f.set(r.z, sub(f.constant(0), r.v));
  emitExp(f, r.z, r.k, r.e, features);
}

/**
 * A kernel over `n` elements (a multiple of 4, the caller finishes the tail) of x: out = body.
 * Parameters: byte addresses of x and of the output, the element count.
 */
function unary<const N extends string>(
  name: N,
  body: (f: FunctionBuilder, r: Registers, features: KernelFeatures) => Operand,
) {
  return kernel({
    name,
    params: i32('x', 'out', 'n'),
    emit(f, { x, out, n }, { features }) {
      const regs = registers(f);
      vectorLoop(f, out, n, [x], (copy, at) => {
        const r = regs[copy];
        f.set(r.v, simdLoad('v128.load', x, at));
        f.storeV128(out, body(f, r, features), at);
      });
    },
  });
}

/** -2z of GELU's tanh form, z = c (x + 0.044715 x³), into `into`. */
function minusTwoZ(f: FunctionBuilder, x: Local, into: Local): void {
  f.set(into, mul(x, add(f.constant(-2 * GELU_C), mul(f.constant(-2 * GELU_C * GELU_CUBIC), mul(x, x)))));
}

/** e^x. */
export const EXP = unary('exp_f32', (f, r, features) => {
  f.set(r.z, r.v);
  emitExp(f, r.z, r.k, r.e, features);
  return r.e;
});

/** The logistic function 1 / (1 + e^-x). */
export const SIGMOID = unary('sigmoid_f32', (f, r, features) => {
  expOfNegated(f, r, features);
  return div(f.constant(1), add(f.constant(1), r.e));
});

/** SiLU x / (1 + e^-x). */
export const SILU = unary('silu_f32', (f, r, features) => {
  expOfNegated(f, r, features);
  return div(r.v, add(f.constant(1), r.e));
});

/**
 * GELU in its tanh form, as x · sigmoid(2z) with z = c (x + 0.044715 x³); x is raised to
 * -CLAMP_X first (below it GELU is under 1e-36 in magnitude), so a huge negative x is not
 * divided by the clamped e^87 alone.
 */
export const GELU = unary('gelu_f32', (f, r, features) => {
  f.set(r.v, simd('f32x4.pmax', r.v, f.constant(-CLAMP_X)));
  minusTwoZ(f, r.v, r.z);
  emitExpClamped(f, r.z, r.k, r.e, features);
  return div(r.v, add(f.constant(1), r.e));
});

/**
 * SwiGLU's forward silu(gate) · up over `n` elements (a multiple of 4). Parameters: byte
 * addresses of gate, up and the output, the element count.
 */
export const SWIGLU = kernel({
  name: 'swiglu_f32',
  params: i32('gate', 'up', 'out', 'n'),
  emit(f, { gate, up, out, n }, { features }) {
    const regs = registers(f);
    vectorLoop(f, out, n, [gate, up], (copy, at) => {
      const r = regs[copy];
      f.set(r.v, simdLoad('v128.load', gate, at));
      expOfNegated(f, r, features);
      f.storeV128(out, mul(div(r.v, add(f.constant(1), r.e)), simdLoad('v128.load', up, at)), at);
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
  emit(f, { x, grad, out, n }, { features }) {
    const regs = registers(f);
    vectorLoop(f, out, n, [x, grad], (copy, at) => {
      const { v, z, k, e, s } = regs[copy];
      f.set(v, clamp(f, simdLoad('v128.load', x, at), -CLAMP_X, CLAMP_X));
      minusTwoZ(f, v, z);
      emitExpClamped(f, z, k, e, features);
      f.set(s, div(f.constant(1), add(f.constant(1), e)));
      const slope = add(f.constant(2 * GELU_C), mul(f.constant(6 * GELU_C * GELU_CUBIC), mul(v, v)));
      const factor = add(f.constant(1), mul(sub(f.constant(1), s), mul(v, slope)));
      f.storeV128(out, mul(simdLoad('v128.load', grad, at), mul(s, factor)), at);
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
  emit(f, { gate, up, grad, out, n }, { features }) {
    const regs = registers(f);
    vectorLoop(f, out, n, [gate, up, grad], (copy, at) => {
      const r = regs[copy];
      const { v, e, s } = r;
      f.set(v, simdLoad('v128.load', gate, at));
      expOfNegated(f, r, features);
      f.set(s, div(f.constant(1), add(f.constant(1), e)));
      const oneMinusS = simd('f32x4.pmin', f.constant(1), mul(e, s));
      const slope = add(s, mul(mul(v, s), oneMinusS));
      const upGrad = mul(simdLoad('v128.load', grad, at), simdLoad('v128.load', up, at));
      f.storeV128(out, mul(upGrad, slope), at);
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
