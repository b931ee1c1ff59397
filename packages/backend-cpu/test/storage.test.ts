import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CpuBackend } from '../src/backend';
import { CpuStorage } from '../src/storage';
import { BlockAllocator } from '../src/wasm/allocator';
import { WasmHeap } from '../src/wasm/heap';
import { wasmRuntime } from '../src/wasm/runtime';
import { BLOCK_ALIGN, sizeClass } from '../src/wasm/size-classes';

describe('size classes', () => {
  it('round up by at most a quarter, in 64-byte multiples, with increasing indices', () => {
    let previous = sizeClass(1);
    expect(previous).toEqual({ index: 0, size: 64 });
    for (const bytes of [
      2,
      63,
      64,
      65,
      4095,
      4096,
      4097,
      5000,
      8192,
      8193,
      1e6,
      36_864_000,
      2 ** 31,
      2 ** 32 - 1,
    ]) {
      const cls = sizeClass(bytes);
      expect(cls.size).toBeGreaterThanOrEqual(bytes);
      expect(cls.size % BLOCK_ALIGN).toBe(0);
      if (bytes > 64) expect(cls.size).toBeLessThanOrEqual(bytes * 1.25 + 64);
      expect(cls.index).toBeGreaterThanOrEqual(previous.index);
      if (cls.size > previous.size) expect(cls.index).toBeGreaterThan(previous.index);
      previous = cls;
    }
  });

  it('rejects sizes that are not positive integers', () => {
    expect(() => sizeClass(0)).toThrow(/expected a positive byte count, got 0/);
    expect(() => sizeClass(1.5)).toThrow(/got 1.5/);
  });
});

describe('BlockAllocator', () => {
  it('reuses freed blocks of the same class and extends the region when needed', () => {
    const ends: number[] = [];
    const allocator = new BlockAllocator(100, 1024, (end) => {
      ends.push(end);
      return end <= 1 << 20 ? end + 4096 : undefined;
    });
    const first = allocator.alloc(100);
    expect(first?.block.offset).toBe(128);
    expect(first?.fresh).toBe(true);
    const second = allocator.alloc(1000);
    expect(second?.block.offset).toBe(256);
    expect(ends).toEqual([1280]);
    if (!first) throw new Error('expected a block');
    allocator.free(first.block);
    const again = allocator.alloc(120);
    expect(again).toEqual({ block: first.block, fresh: false });
    expect(allocator.alloc(2 << 20)).toBeUndefined();
  });
});

describe('WasmHeap', () => {
  it('hands out zeroed, aligned blocks and keeps shared views valid when it grows', () => {
    const heap = WasmHeap.create();
    expect(heap.shared).toBe(true);
    const a = heap.alloc(1000);
    if (!a) throw new Error('expected a block');
    expect(a.offset % BLOCK_ALIGN).toBe(0);
    const view = new Float32Array(heap.memory.buffer, a.offset, 250);
    view.fill(7);
    heap.free(a);
    const b = heap.alloc(1000);
    expect(b?.offset).toBe(a.offset);
    expect(view.every((v) => v === 0)).toBe(true);
    view[3] = 5;
    const generation = heap.generation;
    const big = heap.alloc(64 << 20);
    expect(big).toBeDefined();
    expect(heap.generation).toBeGreaterThan(generation);
    expect(view[3]).toBe(5);
    expect(new Float32Array(heap.memory.buffer, a.offset, 250)[3]).toBe(5);
  });
});

describe('CpuStorage', () => {
  it('lives in the WebAssembly heap, starts zeroed and is zeroed again when reused', () => {
    expect(wasmRuntime()).toBeDefined();
    const s = new CpuStorage('f32', 1000);
    expect(s.address).toBeDefined();
    expect(s.bytes).toBe(4000);
    expect(s.f32.length).toBe(1000);
    expect(s.f32.every((v) => v === 0)).toBe(true);
    s.f32.fill(3);
    const address = s.address;
    s.free();
    const t = new CpuStorage('i32', 1000);
    expect(t.address).toBe(address);
    expect(t.i32.every((v) => v === 0)).toBe(true);
    expect(t.values).toBeInstanceOf(Int32Array);
    t.free();
  });

  it('hands out zeros for fill(0) without writing fresh memory, and zeroes a reused block', async () => {
    const backend = new CpuBackend({ threads: 1 });
    const size = 5000;
    const written = backend.upload(new Float32Array(size).fill(7));
    backend.release(written);
    // The freed block is the next one of its size class: fill(0) must clear what was written there.
    const zeros = backend.fill(size, 0, 'f32');
    expect(
      Array.from(await backend.read({ id: zeros, shape: [size], dtype: 'f32' })).every((v) => v === 0),
    ).toBe(true);
    const sevens = backend.fill(size, 7, 'f32');
    expect(
      Array.from(await backend.read({ id: sevens, shape: [size], dtype: 'f32' })).every((v) => v === 7),
    ).toBe(true);
    for (const id of [zeros, sevens]) backend.release(id);
  });

  it('allocates zeros from fill(0) at their first use: freed unused, they never took heap', () => {
    const backend = new CpuBackend({ threads: 1 });
    const heap = wasmRuntime()?.heap;
    if (!heap) throw new Error('this engine has no WebAssembly SIMD heap');
    const [bytes, live] = [heap.memory.buffer.byteLength, backend.liveBytes()];
    const huge = backend.fill(2 ** 29, 0, 'f32'); // 2 GiB
    expect(backend.liveBytes() - live).toBe(2 ** 31);
    backend.release(huge);
    expect(heap.memory.buffer.byteLength).toBe(bytes);
    expect(backend.liveBytes()).toBe(live);
    expect(() => backend.release(huge)).toThrow(/already released/);
  });

  it('keeps its values when other storage makes the heap grow', () => {
    const s = new CpuStorage('f32', 10);
    s.f32.set([1, 2, 3]);
    const big = new CpuStorage('f32', 50_000_000);
    expect(big.f32.length).toBe(50_000_000);
    expect([...s.f32.subarray(0, 3)]).toEqual([1, 2, 3]);
    big.free();
    s.free();
  });

  it('checks the dtype of typed views and the length', () => {
    const s = new CpuStorage('i32', 3);
    expect(() => s.f32).toThrow(/expected f32 storage, got i32/);
    expect(() => new CpuStorage('f32', -1)).toThrow(/expected a non-negative integer length, got -1/);
    expect(new CpuStorage('f32', 0).f32.length).toBe(0);
  });

  it('refuses use after free, and free is idempotent', () => {
    const s = new CpuStorage('f32', 4);
    s.free();
    s.free();
    expect(() => s.f32).toThrow(/f32\[4\] used after free\(\)/);
    expect(() => s.address).toThrow(/used after free/);
  });

  it("returns a dropped storage's block once collected, registered at the end of the task or after many storages", () => {
    const child = new URL('./dropped-storage-child.ts', import.meta.url).pathname;
    const args = ['--expose-gc', '--conditions=@loom/source', '--import', 'tsx', child];
    const result = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' }));
    expect(result).toMatchObject({ byTask: true, byCount: true });
  });
});

describe('hosts without SharedArrayBuffer or WebAssembly SIMD', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    vi.resetModules();
  });

  it('use an unshared memory and re-create views after it grows', async () => {
    vi.resetModules();
    vi.stubGlobal('SharedArrayBuffer', undefined);
    const storage = await import('../src/storage');
    const runtime = await import('../src/wasm/runtime');
    const s = new storage.CpuStorage('f32', 4);
    expect(runtime.wasmRuntime()?.heap.shared).toBe(false);
    s.f32.set([1, 2, 3, 4]);
    const before = s.f32;
    const big = new storage.CpuStorage('f32', 40_000_000);
    expect(before.length).toBe(0);
    expect([...s.f32]).toEqual([1, 2, 3, 4]);
    big.free();
    s.free();
  });

  it('keep values in ordinary typed arrays when SIMD is missing', async () => {
    vi.resetModules();
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const storage = await import('../src/storage');
    const runtime = await import('../src/wasm/runtime');
    const s = new storage.CpuStorage('f32', 4);
    expect(s.address).toBeUndefined();
    expect(runtime.wasmUnavailableReason()).toMatch(/SIMD/);
    expect(s.f32.buffer).toBeInstanceOf(ArrayBuffer);
  });
});
