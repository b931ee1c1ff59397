import { describe, expect, it } from 'vitest';
import { geluGradInto, geluInto } from '../src/gelu';
import { GELU_C, GELU_CUBIC, gelu, geluSlope } from '../src/gelu-formula';
import { CpuStorage } from '../src/storage';
import { wasmRuntime } from '../src/wasm/runtime';
import { configureCpuKernels, cpuKernelSettings } from '../src/wasm/settings';

/**
 * Sum of the magnitudes of the two terms of gelu'(x) = s (1 + (1 - s) x (2c + 6 · 0.044715 c x²)):
 * the scale of the rounding error where they cancel (near x = -0.75).
 */
function slopeTerms(x: number): number {
  const s = 1 / (1 + Math.exp(-2 * GELU_C * (x + GELU_CUBIC * x ** 3)));
  return s * (1 + (1 - s) * Math.abs(x) * (2 * GELU_C + 6 * GELU_C * GELU_CUBIC * x * x));
}

/** Values across GELU's whole range: the steep middle, both tails, overflow of x³, specials. */
function inputs(n: number): number[] {
  const specials = [0, -0, 1e-30, -1e-30, 3e38, -3e38, 1e13, -1e13, 40, -40, 87, -87, 200, -200];
  return Array.from({ length: n }, (_, i) =>
    i < specials.length ? specials[i] : Math.sinh(((i * 7919) % 1000) / 100 - 5) * 2,
  );
}

function storage(values: readonly number[]): CpuStorage {
  const s = new CpuStorage('f32', values.length);
  s.values.set(values);
  return s;
}

/**
 * |got - want| within a few f32 ulps, plus |2z| ulps: the kernel forms z = c (x + 0.044715 x³) in
 * f32, and e^(2z) carries that rounding as relative error (the scalar form works in float64).
 */
function expectClose(
  got: ArrayLike<number>,
  want: (i: number) => number,
  xs: readonly number[],
  what: string,
  scale: (i: number) => number = (i) => Math.abs(want(i)),
): void {
  for (let i = 0; i < got.length; i++) {
    const w = Math.fround(want(i));
    const z = Math.min(Math.abs(2 * GELU_C * (xs[i] + GELU_CUBIC * xs[i] ** 3)), 100);
    const tolerance = (8 + z) * 2 ** -23 * Math.max(Math.abs(w), scale(i), 1e-30);
    expect(Math.abs(got[i] - w), `${what} element ${i}: got ${got[i]}, want ${w}`).toBeLessThanOrEqual(
      tolerance,
    );
  }
}

describe.skipIf(!wasmRuntime())('GELU in WebAssembly SIMD matches the scalar form', () => {
  for (const n of [1, 3, 4, 7, 64, 1001, 100_003]) {
    it(`${n} elements`, () => {
      const xs = inputs(n).map(Math.fround);
      const grads = xs.map((_, i) => Math.fround(Math.cos(i)));
      const x = storage(xs);
      const g = storage(grads);
      const out = new CpuStorage('f32', n);
      const slope = new CpuStorage('f32', n);
      geluInto(x, out);
      geluGradInto(x, g, slope);
      expectClose(out.values, (i) => gelu(xs[i]), xs, 'gelu');
      expectClose(
        slope.values,
        (i) => grads[i] * geluSlope(xs[i]),
        xs,
        'gelu gradient',
        (i) => Math.abs(grads[i]) * slopeTerms(xs[i]),
      );
      for (const s of [x, g, out, slope]) s.free();
    });
  }

  it('propagates NaN and keeps the sign of infinities', () => {
    const x = storage([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1]);
    const out = new CpuStorage('f32', 4);
    geluInto(x, out);
    expect(Number.isNaN(out.values[0])).toBe(true);
    expect(out.values[1]).toBe(Number.POSITIVE_INFINITY);
    expect(out.values[3]).toBeCloseTo(gelu(1), 6);
    x.free();
    out.free();
  });

  it('gives the same values with the JavaScript fallback', () => {
    const xs = inputs(257).map(Math.fround);
    const x = storage(xs);
    const simd = new CpuStorage('f32', xs.length);
    const js = new CpuStorage('f32', xs.length);
    geluInto(x, simd);
    const before = cpuKernelSettings();
    configureCpuKernels({ wasm: false });
    try {
      geluInto(x, js);
    } finally {
      configureCpuKernels(before);
    }
    expectClose(simd.values, (i) => js.values[i], xs, 'simd vs js');
    for (const s of [x, simd, js]) s.free();
  });
});
