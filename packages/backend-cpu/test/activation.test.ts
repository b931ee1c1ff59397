import { describe, expect, it } from 'vitest';
import { geluGradInto, swigluGradInto, swigluInto, unaryVectorInto } from '../src/activation';
import { GELU_C, GELU_CUBIC, gelu, geluSlope } from '../src/gelu-formula';
import { CpuStorage } from '../src/storage';
import { silu, unaryKernel } from '../src/unary';
import { JS_SETTINGS, SETTINGS, wasmForTests } from './wasm-for-tests';

/** |2z|, the argument of the exp inside GELU. */
function geluArgument(x: number): number {
  return Math.abs(2 * GELU_C * (x + GELU_CUBIC * x ** 3));
}

/**
 * Sum of the magnitudes of the two terms of gelu'(x) = s (1 + (1 - s) x (2c + 6 · 0.044715 c x²)):
 * the scale of the rounding error where they cancel (near x = -0.75).
 */
function slopeTerms(x: number): number {
  const s = 1 / (1 + Math.exp(-2 * GELU_C * (x + GELU_CUBIC * x ** 3)));
  return s * (1 + (1 - s) * Math.abs(x) * (2 * GELU_C + 6 * GELU_C * GELU_CUBIC * x * x));
}

/** The logistic function in float64. */
function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** silu'(x) = s (1 + x (1 - s)) with s = sigmoid(x), in float64. */
function siluSlope(x: number): number {
  const s = sigmoid(x);
  return s * (1 + x * (1 - s));
}

/** Values across the whole range: the steep middle, both tails, overflow of x³, specials. */
function inputs(n: number): number[] {
  const specials = [0, -0, 1e-30, -1e-30, 3e38, -3e38, 1e13, -1e13, 40, -40, 87, -87, 200, -200];
  return Array.from({ length: n }, (_, i) =>
    i < specials.length ? specials[i] : Math.sinh(((i * 7919) % 1000) / 100 - 5) * 2,
  ).map(Math.fround);
}

function storage(values: readonly number[]): CpuStorage {
  const s = new CpuStorage('f32', values.length);
  s.values.set(values);
  return s;
}

/**
 * |got - want| within (8 + |argument|) f32 ulps of the larger of |want| and `scale`: the kernels
 * evaluate the exp argument in f32, and e^a carries its rounding as relative error |a| ulps (the
 * scalar forms work in float64).
 */
function expectClose(
  got: ArrayLike<number>,
  want: (i: number) => number,
  argument: (i: number) => number,
  what: string,
  scale: (i: number) => number = () => 0,
): void {
  for (let i = 0; i < got.length; i++) {
    const w = Math.fround(want(i));
    if (!Number.isFinite(w)) {
      expect(got[i], `${what} element ${i}`).toBe(w);
      continue;
    }
    const ulps = 8 + Math.min(argument(i), 100);
    const tolerance = ulps * 2 ** -23 * Math.max(Math.abs(w), scale(i), 1e-30);
    expect(Math.abs(got[i] - w), `${what} element ${i}: got ${got[i]}, want ${w}`).toBeLessThanOrEqual(
      tolerance,
    );
  }
}

const UNARY = [
  { op: 'gelu', scalar: gelu, argument: geluArgument },
  { op: 'exp', scalar: Math.exp, argument: Math.abs },
  { op: 'sigmoid', scalar: (x: number) => 1 / (1 + Math.exp(-x)), argument: Math.abs },
  { op: 'silu', scalar: silu, argument: Math.abs },
] as const;

describe.skipIf(!wasmForTests())('activations in WebAssembly SIMD match their scalar forms', () => {
  for (const n of [1, 3, 4, 7, 64, 1001, 100_003]) {
    it(`${n} elements`, () => {
      const xs = inputs(n);
      const others = xs.map((_, i) => Math.fround(Math.cos(i)));
      const x = storage(xs);
      const other = storage(others);
      const out = new CpuStorage('f32', n);
      for (const { op, scalar, argument } of UNARY) {
        expect(unaryVectorInto(SETTINGS, op, x, out)).toBe(true);
        expectClose(
          out.values,
          (i) => scalar(xs[i]),
          (i) => argument(xs[i]),
          op,
        );
      }
      geluGradInto(SETTINGS, x, other, out);
      expectClose(
        out.values,
        (i) => others[i] * geluSlope(xs[i]),
        (i) => geluArgument(xs[i]),
        'gelu gradient',
        (i) => Math.abs(others[i]) * slopeTerms(xs[i]),
      );
      swigluInto(SETTINGS, x, other, out);
      expectClose(
        out.values,
        (i) => silu(xs[i]) * others[i],
        (i) => Math.abs(xs[i]),
        'swiglu',
      );
      const grads = xs.map((_, i) => Math.fround(Math.sin(3 * i) * 2));
      const grad = storage(grads);
      swigluGradInto(SETTINGS, x, other, grad, out);
      expectClose(
        out.values,
        (i) => grads[i] * others[i] * siluSlope(xs[i]),
        (i) => Math.abs(xs[i]),
        'swiglu gate gradient',
        // The two terms of s + x s (1 - s) cancel near x = -1.28.
        (i) => Math.abs(grads[i] * others[i]) * sigmoid(xs[i]) * (1 + Math.abs(xs[i]) * (1 - sigmoid(xs[i]))),
      );
      // swiglu's rule takes the up gradient grad · silu(gate) from swiglu(gate, grad).
      swigluInto(SETTINGS, x, grad, out);
      expectClose(
        out.values,
        (i) => grads[i] * silu(xs[i]),
        (i) => Math.abs(xs[i]),
        'swiglu up gradient',
      );
      for (const s of [x, other, out, grad]) s.free();
    });
  }

  it('GELU and its gradient stay within 1e-6 and 4e-6 of the tanh form on a dense grid', () => {
    // x from -12 to 12 in steps of 1e-4: the steep middle, the cancellation near x = -0.75 and
    // both saturated tails. The float64 reference uses Math.tanh, not the kernels' sigmoid form.
    const n = 240_001;
    const xs = Array.from({ length: n }, (_, i) => Math.fround(-12 + i * 1e-4));
    const x = storage(xs);
    const ones = storage(xs.map(() => 1));
    const out = new CpuStorage('f32', n);
    const tanhOf = (v: number) => Math.tanh(GELU_C * (v + GELU_CUBIC * v ** 3));
    expect(unaryVectorInto(SETTINGS, 'gelu', x, out)).toBe(true);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const want = 0.5 * xs[i] * (1 + tanhOf(xs[i]));
      worst = Math.max(worst, Math.abs(out.values[i] - want) / Math.max(1, Math.abs(want)));
    }
    expect(worst, 'gelu: largest error relative to max(1, |gelu|)').toBeLessThanOrEqual(1e-6);
    geluGradInto(SETTINGS, x, ones, out);
    worst = 0;
    for (let i = 0; i < n; i++) {
      const v = xs[i];
      const t = tanhOf(v);
      const want = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * GELU_C * (1 + 3 * GELU_CUBIC * v * v);
      worst = Math.max(worst, Math.abs(out.values[i] - want));
    }
    expect(worst, 'gelu gradient: largest absolute error').toBeLessThanOrEqual(4e-6);
    for (const s of [x, ones, out]) s.free();
  });

  it('propagates NaN and keeps the sign of infinities', () => {
    const x = storage([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1]);
    const out = new CpuStorage('f32', 4);
    unaryVectorInto(SETTINGS, 'gelu', x, out);
    expect(Number.isNaN(out.values[0])).toBe(true);
    expect(out.values[1]).toBe(Number.POSITIVE_INFINITY);
    expect(out.values[3]).toBeCloseTo(gelu(1), 6);
    unaryVectorInto(SETTINGS, 'sigmoid', x, out);
    expect(Array.from(out.values.slice(1, 3))).toEqual([1, 0]);
    unaryVectorInto(SETTINGS, 'exp', x, out);
    expect(Array.from(out.values.slice(1, 3))).toEqual([Number.POSITIVE_INFINITY, 0]);
    x.free();
    out.free();
  });

  it("SwiGLU's gradients reach their limits exactly for huge gates", () => {
    const gates = [-3e38, -200, 200, 3e38];
    const x = storage(gates);
    const ones = storage(gates.map(() => 1));
    const out = new CpuStorage('f32', 4);
    swigluGradInto(SETTINGS, x, ones, ones, out);
    // silu' is 0 below and 1 above (1 - s capped at 1, not ∞ · 0).
    expect(Array.from(out.values)).toEqual([0, 0, 1, 1]);
    // The up gradient, swiglu(gate, grad): silu is -0 below (a lost e^-200, not ∞ · 0) and the gate above.
    swigluInto(SETTINGS, x, ones, out);
    expect(Array.from(out.values)).toEqual([-0, -0, 200, Math.fround(3e38)]);
    for (const s of [x, ones, out]) s.free();
  });

  it('leaves ops without a vector kernel, and disabled kernels, to the JavaScript loops', () => {
    const xs = inputs(257);
    const x = storage(xs);
    const simd = new CpuStorage('f32', xs.length);
    const js = new CpuStorage('f32', xs.length);
    expect(unaryVectorInto(SETTINGS, 'tanh', x, simd)).toBe(false);
    unaryVectorInto(SETTINGS, 'gelu', x, simd);
    expect(unaryVectorInto(JS_SETTINGS, 'gelu', x, js)).toBe(false);
    unaryKernel('gelu', x.values, js.values);
    expectClose(
      simd.values,
      (i) => js.values[i],
      (i) => geluArgument(xs[i]),
      'simd vs js',
    );
    for (const s of [x, simd, js]) s.free();
  });
});
