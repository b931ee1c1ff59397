import { full, matmul, scope, sum, tensor, writeSlice, zeros } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { NO_ADAPTER_MESSAGE, WebGPUBackend } from '../src/index';
import type { KernelProgram } from '../src/kernel-program';
import { PipelineCache } from '../src/pipeline-cache';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

describe('creation', () => {
  it('says how to get an adapter when there is none', async () => {
    const gpu = { requestAdapter: async () => null };
    await expect(WebGPUBackend.create({ gpu })).rejects.toThrow(NO_ADAPTER_MESSAGE);
  });
});

describe.skipIf(!backend)('runtime (lavapipe)', () => {
  const b = backend!;

  it('is named webgpu and reads the device limits', () => {
    expect(b.name).toBe('webgpu');
    expect(b.limits.maxStorageBufferBindingSize).toBe(b.device.limits.maxStorageBufferBindingSize);
    expect(b.limits.workgroupSize).toBeGreaterThanOrEqual(64);
  });

  it('runs on a device it is given', async () => {
    const shared = await WebGPUBackend.create({ device: b.device });
    expect(await tensor([1, 2], [2], { backend: shared }).add(1).array()).toEqual([2, 3]);
  });

  it('rounds float64 values to float32 on upload', async () => {
    const values = Float64Array.of(1 + 2 ** -40, 1 / 3);
    const read = await tensor(values, [2], { backend: b }).data();
    expect(read).toBeInstanceOf(Float32Array);
    expect(Array.from(read)).toEqual([1, Math.fround(1 / 3)]);
  });

  it('counts the storages the front-end holds, not the pool', async () => {
    const count = b.liveCount();
    const bytes = b.liveBytes();
    const x = tensor([1, 2, 3], [3], { backend: b });
    const y = x.mul(2);
    expect(b.liveCount()).toBe(count + 2);
    expect(b.liveBytes()).toBe(bytes + 24);
    expect(await y.array()).toEqual([2, 4, 6]);
    x.dispose();
    y.dispose();
    expect(b.liveCount()).toBe(count);
    expect(b.liveBytes()).toBe(bytes);
  });

  it('gives zeros a buffer, filled, at their first use: freed unused, they never took one', async () => {
    const n = 1 << 18; // 1 MiB
    const sevens = full([n], 7, { backend: b });
    await sevens.data();
    sevens.dispose(); // back to the pool, holding sevens
    await b.sync();
    const [created, pooled, bytes] = [b.stats().buffersCreated, b.stats().pooledBytes, b.liveBytes()];
    const unused = zeros([n], { backend: b });
    expect(b.liveBytes()).toBe(bytes + 4 * n);
    unused.dispose();
    expect([b.stats().buffersCreated, b.stats().pooledBytes, b.liveBytes()]).toEqual([
      created,
      pooled,
      bytes,
    ]);
    // Used, zeros take a pooled buffer (the one of sevens) and are filled first, as an input and as a read.
    const used = zeros([n], { backend: b });
    const plus = used.add(1);
    expect(Array.from(await plus.data()).every((v) => v === 1)).toBe(true);
    expect(Array.from(await used.data()).every((v) => v === 0)).toBe(true);
    const read = zeros([n], { backend: b });
    expect(Array.from(await read.data()).every((v) => v === 0)).toBe(true);
    for (const t of [used, plus, read]) t.dispose();
  });

  it('does not hand a released buffer to an upload while queued work still reads it', async () => {
    const before = b.stats().submits;
    const x = tensor(new Float32Array(1000).fill(1), [1000], { backend: b });
    const y = x.add(1); // recorded, not yet submitted
    x.dispose();
    expect(b.stats().submits).toBe(before);
    expect(b.stats().pendingReleases).toBeGreaterThan(0);
    const overwrite = tensor(new Float32Array(1000).fill(100), [1000], { backend: b });
    expect(Array.from(await y.data()).every((v) => v === 2)).toBe(true);
    y.dispose();
    overwrite.dispose();
    await b.sync();
    expect(b.stats().pendingReleases).toBe(0);
  });

  it('keeps writeSlice in order with queued readers of the destination', async () => {
    const dst = zeros([2, 3], { backend: b });
    const before = dst.add(5);
    writeSlice(dst, tensor([[1, 2, 3]], [1, 3], { backend: b }), [1, 0]);
    const after = dst.add(5);
    expect(await before.array()).toEqual([5, 5, 5, 5, 5, 5]);
    expect(await after.array()).toEqual([5, 5, 5, 6, 7, 8]);
    expect(await dst.array()).toEqual([0, 0, 0, 1, 2, 3]);
  });

  it('writes a tensor into a region of its own storage through a copy', async () => {
    const dst = tensor([1, 2, 3, 4], [4], { backend: b });
    writeSlice(dst, dst.reshape([4]).slice([0], [2]), [2]);
    const view = dst.reshape([4]);
    writeSlice(dst, view, [0]);
    expect(await dst.array()).toEqual([1, 2, 1, 2]);
  });

  it('submits long chains in several command buffers and reuses pipelines', async () => {
    const before = b.stats();
    const result = scope(() => {
      let x = full([257], 0, { backend: b });
      for (let i = 0; i < 300; i++) x = x.add(1);
      return x;
    });
    expect(Array.from(await result.data()).every((v) => v === 300)).toBe(true);
    result.dispose();
    const after = b.stats();
    expect(after.submits - before.submits).toBeGreaterThanOrEqual(3);
    expect(after.pipelines - before.pipelines).toBeLessThanOrEqual(2);
  });

  it('handles empty tensors without empty buffers or dispatches', async () => {
    const empty = tensor(new Float32Array(0), [0, 3], { backend: b });
    expect(Array.from(await empty.add(1).data())).toEqual([]);
    expect(await sum(empty, 0).array()).toEqual([0, 0, 0]);
    const product = matmul(full([2, 0], 1, { backend: b }), full([0, 3], 1, { backend: b }));
    expect(await product.array()).toEqual([0, 0, 0, 0, 0, 0]);
    const decode = matmul(full([1, 0], 1, { backend: b }), full([3, 0], 1, { backend: b }), { transB: true });
    expect(await decode.array()).toEqual([0, 0, 0]);
    expect(Array.from(await empty.softmax().data())).toEqual([]);
  });

  it('refuses a tensor larger than one storage binding, zeros at their first use', async () => {
    const elements = Math.floor(b.limits.maxStorageBufferBindingSize / 4) + 1;
    expect(() => full([elements], 1, { backend: b })).toThrow(/maxStorageBufferBindingSize/);
    // Zeros take no buffer until used: freed unused (a compact layer's f32 weight), they are no error.
    full([elements], 0, { backend: b }).dispose();
    const zeros = full([elements], 0, { backend: b });
    await expect(zeros.data()).rejects.toThrow(/maxStorageBufferBindingSize/);
    expect(() => zeros.add(1)).toThrow(/maxStorageBufferBindingSize/);
    zeros.dispose();
  });

  it('refuses storage of another backend', () => {
    expect(() => b.release({ backend: 'cpu' })).toThrow(/cpu backend/);
  });

  it('keeps pooled buffers out of the live count and can trim them', async () => {
    const x = full([100_000], 1, { backend: b });
    await x.data();
    x.dispose();
    await b.sync();
    expect(b.stats().pooledBytes).toBeGreaterThan(0);
    b.trimPool();
    expect(b.stats().pooledBytes).toBe(0);
  });
});

describe.skipIf(!backend)('pipeline cache', () => {
  it('keys pipelines by their code, so one key with two shaders gives two pipelines', () => {
    const cache = new PipelineCache(backend!.device);
    const shader = (value: number): KernelProgram => ({
      key: 'same-key',
      code: () => `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main() { out[0] = ${value}.0; }`,
      inputs: 0,
      outputs: 1,
      uniform: false,
    });
    const one = cache.get(shader(1));
    const two = cache.get(shader(2));
    expect(two.pipeline).not.toBe(one.pipeline);
    expect(cache.get(shader(1)).pipeline).toBe(one.pipeline);
    expect(cache.size).toBe(2);
  });
});
