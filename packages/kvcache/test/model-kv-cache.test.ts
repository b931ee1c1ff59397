import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, type Tensor, zeros } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cacheForModel,
  canTruncate,
  KVCache,
  kvCacheBytes,
  type ModelKVCache,
  RingKVCache,
} from '../src/index';

beforeAll(() => setBackend(new CpuBackend()));

const model = { dim: 16, numHeads: 4, numLayers: 2, numKvHeads: 2, maxSeqLen: 64 };
const bytes = (positions: number) =>
  kvCacheBytes({ batch: 1, seqLen: positions, layers: 2, kvHeads: 2, headDim: 4, bytesPerElement: 4 });

/** Stores `steps` zero keys and values in every layer, one call per layer. */
function fill(cache: ModelKVCache, steps: number): void {
  const k: Tensor = zeros([1, steps, 2, 4]); // [B, T, Hkv, hd]
  const offset = cache.length;
  for (let layer = 0; layer < cache.numLayers; layer++) {
    const stored = cache.update(layer, k, k, offset);
    stored.k.dispose();
    stored.v.dispose();
  }
  k.dispose();
}

describe('cacheForModel', () => {
  it('gives a ring of W slots when the window is shorter than the capacity, else a plain cache', () => {
    const ring = cacheForModel({ ...model, slidingWindow: 8 });
    expect(ring).toBeInstanceOf(RingKVCache);
    expect(ring.bytes()).toBe(bytes(8));
    const short = cacheForModel({ ...model, slidingWindow: 8 }, { capacity: 8 });
    expect(short).toBeInstanceOf(KVCache);
    expect(short.bytes()).toBe(bytes(8));
    const full = cacheForModel(model, { capacity: 20, batch: 1 });
    expect(full).toBeInstanceOf(KVCache);
    expect(full.bytes()).toBe(bytes(20));
    for (const cache of [ring, short, full]) cache.dispose();
  });
});

describe('canTruncate', () => {
  it('allows any stored length for a plain cache and a ring that has not wrapped, only the length after', () => {
    const full = cacheForModel(model, { capacity: 20 });
    const ring = cacheForModel({ ...model, slidingWindow: 4 });
    for (const cache of [full, ring]) fill(cache, 3);
    for (const cache of [full, ring]) {
      expect([0, 1, 3].map((n) => canTruncate(cache, n))).toEqual([true, true, true]);
      expect([-1, 4, 1.5].map((n) => canTruncate(cache, n))).toEqual([false, false, false]);
    }
    fill(full, 3);
    fill(ring, 3); // 6 positions in 4 slots: 0 and 1 are overwritten
    expect(canTruncate(full, 2)).toBe(true);
    expect([2, 5, 6].map((n) => canTruncate(ring, n))).toEqual([false, false, true]);
    expect(() => ring.truncate(5)).toThrow(/older positions were overwritten/);
    full.dispose();
    ring.dispose();
  });
});
