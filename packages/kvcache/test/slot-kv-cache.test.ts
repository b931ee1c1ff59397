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

  it('writeSteps stores one step of several slots as their own writes do, and checks them all before writing', async () => {
    const [batched, single] = [new SlotKVCache(shape), new SlotKVCache(shape)];
    const [slotsB, slotsS] = [batched, single].map((cache) => [
      cache.acquire(),
      cache.acquire(),
      cache.acquire(),
    ]);
    // Slots at different lengths: 2 positions in slot 0, none in slot 1, 4 in slot 2.
    for (const [slot, steps] of [
      [0, 2],
      [2, 4],
    ]) {
      for (const slots of [slotsB, slotsS])
        slots[slot].write(1, kv(steps, slot + 10), kv(steps, slot + 20), 0);
    }
    const order = [2, 0, 1];
    const offsets = [4, 2, 0];
    const k = randn([3, 1, 2, 4], { seed: 5 });
    const v = randn([3, 1, 2, 4], { seed: 6 });
    batched.writeSteps(
      1,
      order.map((s) => slotsB[s]),
      k,
      v,
      offsets,
    );
    order.forEach((s, i) => {
      const row = (t: Tensor) => t.slice([i, 0, 0, 0], [1, 1, 2, 4]);
      slotsS[s].write(1, row(k), row(v), offsets[i]);
    });
    expect(Array.from(await batched.keys(1).data())).toEqual(Array.from(await single.keys(1).data()));
    expect(Array.from(await batched.values(1).data())).toEqual(Array.from(await single.values(1).data()));
    expect(Array.from(await batched.keys(0).data())).toEqual(Array.from(await single.keys(0).data()));
    // The next step goes at each slot's new length; a wrong offset for one slot writes nothing for any.
    const before = Array.from(await batched.keys(1).data());
    expect(() =>
      batched.writeSteps(
        1,
        [slotsB[0], slotsB[1]],
        k.slice([0, 0, 0, 0], [2, 1, 2, 4]),
        k.slice([0, 0, 0, 0], [2, 1, 2, 4]),
        [3, 0],
      ),
    ).toThrow(/layer 1 holds 1 positions, so new keys go at offset 1, got 0/);
    expect(Array.from(await batched.keys(1).data())).toEqual(before);
    expect(() => batched.writeSteps(1, [slotsB[0]], k, v, [3])).toThrow(
      /expected k and v of shape \[1, 1, 2, 4\] and 1 offsets/,
    );
    expect(() =>
      batched.writeSteps(
        1,
        [slotsS[0]],
        k.slice([0, 0, 0, 0], [1, 1, 2, 4]),
        v.slice([0, 0, 0, 0], [1, 1, 2, 4]),
        [3],
      ),
    ).toThrow(/slots\[0\] belongs to another cache/);
    batched.dispose();
    single.dispose();
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
