import { type QuantizedWeight, quantizedMatmul, tensor } from '@loom/tensor';
import { afterAll, beforeAll, expect } from 'vitest';
import { CpuBackend } from '../src/backend';
import type { CpuPrecision } from '../src/precision';
import { wasmForTests } from './wasm-for-tests';

/** A way the CPU backend runs the quantized products. */
export type Mode = {
  readonly name: string;
  readonly wasm: boolean;
  readonly threads: number;
  readonly precision: CpuPrecision;
};

export const MODES: readonly Mode[] = [
  { name: 'wasm, 1 thread', wasm: true, threads: 1, precision: 'f32' },
  { name: 'wasm, 2 threads', wasm: true, threads: 2, precision: 'f32' },
  { name: 'javascript', wasm: false, threads: 1, precision: 'f32' },
  { name: 'float64', wasm: true, threads: 1, precision: 'f64' },
];

/** A backend for each of MODES, made before the suite's tests run; the lookup throws for a mode it lacks. */
export function backendsForModes(): (mode: Mode) => CpuBackend {
  const backends = new Map<string, CpuBackend>();
  beforeAll(async () => {
    wasmForTests();
    for (const mode of MODES) {
      const backend = new CpuBackend({ wasm: mode.wasm, threads: mode.threads, precision: mode.precision });
      await backend.threadsReady();
      backends.set(mode.name, backend);
    }
  });
  afterAll(() => backends.clear());
  return (mode) => {
    const backend = backends.get(mode.name);
    if (!backend) throw new Error(`no backend for ${mode.name}`);
    return backend;
  };
}

/** A product to check: x's values [rows, inner], the weight on `backend`, and its element (j, i) decoded independently. */
export interface QuantizedProductCase {
  readonly mode: Mode;
  readonly backend: CpuBackend;
  readonly xs: Float32Array;
  readonly rows: number;
  readonly weight: QuantizedWeight;
  readonly valueAt: (j: number, i: number) => number;
  /** The values of x that share one int8 scale in the WebAssembly kernels (32, or 256 for the K-quants). */
  readonly xBlock: number;
}

/**
 * Runs quantizedMatmul(x, weight), checks its shape and that it leaves one tensor behind, and compares each output
 * with the float64 sum over i of x[r, i] · valueAt(j, i). The WebAssembly kernels in f32 quantize each `xBlock` of x
 * to int8 (scale max|x| / 127), so each value may move by half a step: that bound on top of a few units of f32
 * rounding of the sum of |terms|. Their integer sums are exact, so nothing else is allowed.
 */
export async function expectQuantizedProduct(c: QuantizedProductCase): Promise<void> {
  const { backend, xs, rows, weight, xBlock } = c;
  const [out, inner] = weight.shape;
  const x = tensor(xs, [rows, inner], { backend });
  const before = backend.liveCount();
  const y = quantizedMatmul(x, weight);
  expect(y.shape).toEqual([rows, out]);
  expect(backend.liveCount()).toBe(before + 1);
  const got = await y.data();
  const int8 = c.mode.wasm && c.mode.precision === 'f32';
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < out; j++) {
      let [want, scale, rounding] = [0, 0, 0];
      for (let b = 0; b < inner / xBlock; b++) {
        const block = xs.subarray(r * inner + b * xBlock, r * inner + (b + 1) * xBlock);
        const halfStep = Math.max(...block.map(Math.abs)) / 254;
        for (let i = b * xBlock; i < (b + 1) * xBlock; i++) {
          const w = c.valueAt(j, i);
          want += xs[r * inner + i] * w;
          scale += Math.abs(xs[r * inner + i] * w);
          rounding += halfStep * Math.abs(w);
        }
      }
      const tol = 1e-6 * scale + 1e-7 + (int8 ? rounding * (1 + 1e-5) : 0);
      expect(Math.abs(got[r * out + j] - want), `out[${r}, ${j}]`).toBeLessThanOrEqual(tol);
    }
  }
  for (const t of [x, y]) t.dispose();
}
