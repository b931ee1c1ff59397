import type { MatmulSpec } from '@loom/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CpuBackend } from '../src/backend';
import { wasmRuntime } from '../src/wasm/runtime';
import { wasmForTests } from './wasm-for-tests';

function spec(m: number, n: number, k: number): MatmulSpec {
  return { batch: 1, m, n, k, transA: false, transB: false, aBatchStride: m * k, bBatchStride: k * n };
}

/** Values in [-1, 1) from a fixed linear congruential sequence. */
function values(length: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return (2 * state) / 2147483648 - 1;
  });
}

/** A [m, k] x [k, n] on `backend`. */
async function product(backend: CpuBackend, m: number, n: number, k: number): Promise<Float32Array> {
  const a = backend.upload(values(m * k, 1));
  const b = backend.upload(values(k * n, 2));
  const out = backend.matmul(
    { id: a, shape: [m, k], dtype: 'f32' },
    { id: b, shape: [k, n], dtype: 'f32' },
    spec(m, n, k),
  );
  const result = Float32Array.from(backend.readSync({ id: out, shape: [m, n], dtype: 'f32' }));
  for (const id of [a, b, out]) backend.release(id);
  return result;
}

/** The product in float64, and the sum of |a b| per element (for a rounding bound). */
function reference(m: number, n: number, k: number): { value: Float64Array; magnitude: Float64Array } {
  const a = values(m * k, 1);
  const b = values(k * n, 2);
  const value = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      for (let q = 0; q < k; q++) {
        value[i * n + j] += a[i * k + q] * b[q * n + j];
        magnitude[i * n + j] += Math.abs(a[i * k + q] * b[q * n + j]);
      }
    }
  }
  return { value, magnitude };
}

function expectClose(got: Float32Array, m: number, n: number, k: number): void {
  const { value, magnitude } = reference(m, n, k);
  for (let i = 0; i < value.length; i++) {
    expect(Math.abs(got[i] - value[i])).toBeLessThanOrEqual(2 * (k + 1) * 2 ** -24 * magnitude[i]);
  }
}

describe('kernel settings per backend', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keeps the settings each backend was made with', () => {
    const js = new CpuBackend({ wasm: false, threads: 1 });
    const wasm = new CpuBackend({ wasm: true, threads: 3 });
    expect(js.kernelSettings).toEqual({ wasm: false, threads: 1 });
    expect(wasm.kernelSettings).toEqual({ wasm: true, threads: 3 });
    const defaults = new CpuBackend().kernelSettings;
    expect(defaults.wasm).toBe(true);
    expect(defaults.threads).toBeGreaterThanOrEqual(1);
    expect(defaults.threads).toBeLessThanOrEqual(8);
    expect(() => new CpuBackend({ threads: 0 })).toThrow(
      /CpuBackend: threads must be a positive integer, got 0; pass 1/,
    );
  });

  it('runs two backends with different settings side by side in one process', async () => {
    const runtime = wasmForTests();
    if (!runtime) return;
    const js = new CpuBackend({ wasm: false, threads: 1 });
    const wasm = new CpuBackend({ wasm: true, threads: 2 });
    expect(await js.threadsReady()).toBe(1);
    expect(await wasm.threadsReady()).toBe(2);

    // A small product runs on the calling thread: only the WebAssembly backend calls gemm.
    const gemm = vi.spyOn(runtime.kernels, 'gemm');
    expectClose(await product(js, 5, 12, 7), 5, 12, 7);
    expect(gemm).not.toHaveBeenCalled();
    expectClose(await product(wasm, 5, 12, 7), 5, 12, 7);
    expect(gemm).toHaveBeenCalledTimes(1);
    expectClose(await product(js, 5, 12, 7), 5, 12, 7);
    expect(gemm).toHaveBeenCalledTimes(1);
    vi.restoreAllMocks();

    // Large products, interleaved: the JavaScript kernels and two threads of WebAssembly.
    for (let round = 0; round < 2; round++) {
      for (const backend of [wasm, js]) expectClose(await product(backend, 96, 200, 150), 96, 200, 150);
    }
    expect(wasmRuntime()).toBe(runtime);
  });
});
