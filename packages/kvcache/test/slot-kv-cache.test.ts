import { CpuBackend } from '@loom/backend-cpu';
import { getBackend, randn, setBackend, type Tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { kvCacheBytes, SlotKVCache } from '../src/index';

beforeAll(() => setBackend(new CpuBackend()));

const shape = { numLayers: 2, numKvHeads: 2, headDim: 4, capacity: 6, slots: 3 };

/** Random keys or values [1, steps, 2, 4]. */
function kv(steps: number, seed: number): Tensor {
  return randn([1, steps, 2, 4], { seed });
}

describe('SlotKVCache', () => {
  it('keeps each slot in its own row of one storage per layer, at its own length', async () => {
    const live = getBackend().liveCount();
    const cache = new SlotKVCache(shape);
    expect(cache.bytes()).toBe(
      kvCacheBytes({ batch: 3, seqLen: 6, layers: 2, kvHeads: 2, headDim: 4, bytesPerElement: 4 }),
    );
    const [a, b] = [cache.acquire(), cache.acquire()];
    expect([a.slot, b.slot, cache.free]).toEqual([0, 1, 1]);
    expect(a.bytes()).toBe(cache.bytes() / 3);
    const [k1, v1, k2, v2] = [kv(3, 1), kv(3, 2), kv(1, 3), kv(1, 4)];
    const past = b.update(1, k1, v1, 0); // [1, 3, 2, 4]
    expect(past.k.shape).toEqual([1, 3, 2, 4]);
    expect(Array.from(await past.v.data())).toEqual(Array.from(await v1.data()));
    b.write(1, k2, v2, 3);
    const row = cache.keys(1).slice([1, 0, 0, 0], [1, 4, 2, 4]); // slot 1, positions 0..3
    expect(Array.from(await row.data())).toEqual([...(await k1.data()), ...(await k2.data())]);
    const other = cache.values(1).slice([0, 0, 0, 0], [1, 4, 2, 4]); // slot 0 was not written
    expect(Array.from(await other.data()).every((x) => x === 0)).toBe(true);
    for (const t of [k1, v1, k2, v2, past.k, past.v, row, other]) t.dispose();
    cache.dispose();
    expect(getBackend().liveCount()).toBe(live);
  });

  it('gives released slots back, lowest first, and refuses when all are taken', () => {
    const cache = SlotKVCache.forModel(
      { dim: 8, numHeads: 2, numKvHeads: 2, numLayers: 1, maxSeqLen: 5 },
      { slots: 2 },
    );
    expect(cache.capacity).toBe(5);
    const [a, b] = [cache.acquire(), cache.acquire()];
    expect(() => cache.acquire()).toThrow(/all 2 slots are taken; release a slot first/);
    b.release();
    a.release();
    a.release(); // idempotent
    expect(cache.free).toBe(2);
    const c = cache.acquire();
    expect(c.slot).toBe(0);
    expect(c.length).toBe(0);
    cache.dispose();
  });

  it('refuses a write at the wrong offset, of the wrong shape, past the capacity, or after release', () => {
    const cache = new SlotKVCache(shape);
    const slot = cache.acquire();
    const [k, v, wide, long] = [kv(1, 1), kv(1, 2), randn([1, 1, 3, 4], { seed: 3 }), kv(7, 4)];
    expect(() => slot.write(0, k, v, 2)).toThrow(
      /layer 0 holds 0 positions, so new keys go at offset 0, got 2/,
    );
    expect(() => slot.write(0, wide, wide, 0)).toThrow(/expected k and v of shape \[1, T, 2, 4\]/);
    expect(() => slot.write(0, long, long, 0)).toThrow(
      /positions 0\.\.6 of layer 0 exceed the slot's capacity of 6/,
    );
    expect(() => slot.write(2, k, v, 0)).toThrow(/layer must be an integer in \[0, 1\], got 2/);
    slot.release();
    expect(() => slot.write(0, k, v, 0)).toThrow(/slot 0 was released; acquire a new one/);
    for (const t of [k, v, wide, long]) t.dispose();
    cache.dispose();
  });
});
