import {
  arange,
  attention,
  full,
  fusedOps,
  matmul,
  randn,
  rmsnorm,
  softmax,
  softmaxCrossEntropy,
  sum,
  type Tensor,
  tensor,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/index';

/** Below float32's precision next to 1; sums of it and small integers are exact in float64. */
const TINY = 2 ** -40;

describe('cpu backend precision', () => {
  const f64 = new CpuBackend({ precision: 'f64' });
  const f32 = new CpuBackend();
  const on = (backend: CpuBackend) => ({ backend });

  it('defaults to f32, which rounds to float32', async () => {
    expect(f32.precision).toBe('f32');
    const x = tensor([1 + TINY], [1], on(f32));
    const values = await x.data();
    expect(values).toBeInstanceOf(Float32Array);
    expect(values[0]).toBe(1);
    x.dispose();
  });

  it("keeps float64 values through upload, read, add and matmul at 'f64'", async () => {
    expect(f64.precision).toBe('f64');
    const one = tensor([1], [1], on(f64));
    const sumValues = await one.add(TINY).data();
    expect(sumValues).toBeInstanceOf(Float64Array);
    expect(sumValues[0]).toBe(1 + TINY);
    expect((await tensor(Float64Array.of(1 + TINY), [1], on(f64)).data())[0]).toBe(1 + TINY);
    // [1, 4] x [4, 1] (a dot product), [2, 4] x [4, 3] (the matrix path) and its transposes.
    const a = tensor([1 + TINY, 1, 2, -1, 3, 1, 0.5, TINY], [2, 4], on(f64));
    const b = tensor([1, 0, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0], [4, 3], on(f64));
    const exact = [1 + TINY, 3, 4 + 2 * TINY, 4 + TINY, 1.5, 6.5];
    expect(Array.from(await matmul(a, b).data())).toEqual(exact);
    const transposed = matmul(a.transpose(), b.transpose(), { transA: true, transB: true });
    expect(Array.from(await transposed.data())).toEqual(exact);
    const row = matmul(a.reshape([8]).slice([0], [4]).reshape([1, 4]), b);
    expect(Array.from(await row.data())).toEqual(exact.slice(0, 3));
  });

  it("computes the other kernels in float64 at 'f64'; random values stay float32, as on every backend", async () => {
    const values = async (t: Tensor) => Array.from(await t.data());
    expect(await values(full([2], 1 + TINY, on(f64)))).toEqual([1 + TINY, 1 + TINY]);
    expect(await values(arange(3, 1, TINY, on(f64)))).toEqual([1, 1 + TINY, 1 + 2 * TINY]);
    expect(await values(sum(tensor([1, TINY, TINY], [3], on(f64))))).toEqual([1 + 2 * TINY]);
    const normal = await randn([4], { seed: 7, backend: f64 }).data();
    expect(Array.from(normal)).toEqual(Array.from(await randn([4], { seed: 7, backend: f32 }).data()));
    const p = await softmax(tensor([0, Math.log(3)], [1, 2], on(f64))).data();
    expect(p[0]).toBeCloseTo(0.25, 15);
    expect(p[1]).toBeCloseTo(0.75, 15);
    const loss = softmaxCrossEntropy(
      tensor([0, Math.log(3)], [1, 2], on(f64)),
      tensor([1], [1], { ...on(f64), dtype: 'i32' }),
    );
    expect(await loss.item()).toBeCloseTo(-Math.log(0.75), 15);
    const normed = await rmsnorm(tensor([3, 4], [1, 2], on(f64)), tensor([1, 1], [2], on(f64)), 0).data();
    expect(normed[0]).toBeCloseTo(3 / Math.sqrt(12.5), 15);
  });

  it("runs fused attention in float64 at 'f64', matching its composite", async () => {
    const q = randn([1, 3, 2, 4], { seed: 1, backend: f64 }).mul(1 + TINY);
    const k = randn([1, 5, 1, 4], { seed: 2, backend: f64 });
    const v = randn([1, 5, 1, 4], { seed: 3, backend: f64 }).add(TINY);
    const options = { mask: { kind: 'prefix', length: 4 }, offset: 2, window: 2, keyLengths: [] } as const;
    const fused = await attention(q, k, v, options).data();
    const composite = await fusedOps.attention
      .composite(q, k, v, { ...options, scale: 1 / Math.sqrt(4) })
      .data();
    expect(fused).toBeInstanceOf(Float64Array);
    let worst = 0;
    for (let i = 0; i < fused.length; i++) worst = Math.max(worst, Math.abs(fused[i] - composite[i]));
    expect(worst).toBeLessThan(1e-14);
  });

  it('counts 8 bytes per float64 element and 4 per i32 element', () => {
    const backend = new CpuBackend({ precision: 'f64' });
    full([3], 1, on(backend));
    full([2], 1, { ...on(backend), dtype: 'i32' });
    expect(backend.liveBytes()).toBe(3 * 8 + 2 * 4);
  });

  it('reads f32 tensors as Float32Array through float32Data, rounding float64 values once', async () => {
    const x = tensor([1 + TINY, 0.1], [2], on(f64));
    const values = await x.float32Data();
    expect(values).toBeInstanceOf(Float32Array);
    expect(Array.from(values)).toEqual([1, Math.fround(0.1)]);
    const ids = tensor([1], [1], { ...on(f64), dtype: 'i32' });
    await expect(ids.float32Data()).rejects.toThrow(
      "float32Data: expected an f32 tensor, got i32; cast it with .cast('f32') first",
    );
  });

  it('stores i32 tensors as Int32Array at either precision', async () => {
    const ids = tensor([1, 2], [2], { ...on(f64), dtype: 'i32' });
    expect(await ids.data()).toBeInstanceOf(Int32Array);
    expect(await ids.cast('f32').data()).toBeInstanceOf(Float64Array);
  });

  it('rejects an unknown precision, naming the option and the allowed values', () => {
    // @ts-expect-error: 'f16' is not a CpuPrecision
    expect(() => new CpuBackend({ precision: 'f16' })).toThrow(
      "CpuBackend: option precision must be 'f32' or 'f64', got 'f16'",
    );
  });
});
