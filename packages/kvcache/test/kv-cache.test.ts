import { CpuBackend } from '@loom/backend-cpu';
import { makeConfig, TransformerLM } from '@loom/nn';
import { randn, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { KVCache, kvCacheBytes } from '../src/index';

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

const shape = { numLayers: 2, numKvHeads: 2, headDim: 4, capacity: 8 };

/** Random keys or values [1, steps, 2, 4]. */
function kv(steps: number, seed: number): Tensor {
  return randn([1, steps, 2, 4], { seed });
}

async function values(t: Tensor): Promise<number[]> {
  return Array.from(await t.data());
}

describe('KVCache', () => {
  it('preallocates only the key/value heads and reports its bytes', () => {
    const cache = new KVCache({ ...shape, batch: 3 });
    expect(cache.bytes()).toBe(
      kvCacheBytes({ batch: 3, seqLen: 8, layers: 2, kvHeads: 2, headDim: 4, bytesPerElement: 4 }),
    );
    expect(cache.length).toBe(0);
    expect(cache.remaining).toBe(8);
    cache.dispose();
  });

  it('sizes itself from a model config: grouped heads shrink it', () => {
    const config = makeConfig('llama', {
      vocabSize: 16,
      dim: 32,
      numLayers: 3,
      numHeads: 8,
      numKvHeads: 2,
      maxSeqLen: 10,
    });
    const cache = KVCache.forModel(config);
    expect([cache.numLayers, cache.numKvHeads, cache.headDim, cache.capacity]).toEqual([3, 2, 4, 10]);
    expect(cache.bytes()).toBe(3 * 2 * 10 * 2 * 4 * 4);
    cache.dispose();
  });

  it('appends, returns views of the whole storage and counts positions in every layer', async () => {
    const cache = new KVCache(shape);
    const k = kv(3, 1);
    const v = kv(3, 2);
    const all = cache.update(0, k, v, 0);
    expect(all.k.shape).toEqual([1, 8, 2, 4]);
    expect((await values(all.k)).slice(0, 24)).toEqual(await values(k));
    expect((await values(all.v)).slice(0, 24)).toEqual(await values(v));
    expect(cache.length).toBe(0); // layer 1 has nothing yet
    cache.append(1, k, v);
    expect(cache.length).toBe(3);
    const k2 = kv(1, 3);
    cache.append(0, k2, k2);
    const again = cache.update(1, k2, k2, 3);
    expect((await values(again.k)).slice(24, 32)).toEqual(await values(k2));
    expect(cache.length).toBe(4);
    for (const t of [k, v, k2, all.k, all.v, again.k, again.v]) t.dispose();
    cache.dispose();
  });

  it('truncates to reuse a prefix and clones independently', async () => {
    const cache = new KVCache(shape);
    const a = kv(4, 5);
    for (let layer = 0; layer < 2; layer++) cache.append(layer, a, a);
    const copy = cache.clone();
    cache.truncate(2);
    expect(cache.length).toBe(2);
    const b = kv(1, 6);
    for (let layer = 0; layer < 2; layer++) cache.append(layer, b, b);
    expect(cache.length).toBe(3);
    expect(copy.length).toBe(4);
    const original = copy.update(0, kv(1, 7), kv(1, 7), 4).k;
    expect((await values(original)).slice(0, 32)).toEqual(await values(a));
    original.dispose();
    cache.dispose();
    copy.dispose();
    for (const t of [a, b]) t.dispose();
  });

  for (const extra of [{}, { qkNorm: true, headDim: 6 }]) {
    it(`gives the logits of a full forward pass when a model decodes through it ${JSON.stringify(extra)}`, async () => {
      const config = makeConfig('llama', {
        vocabSize: 13,
        dim: 16,
        numLayers: 2,
        numHeads: 4,
        numKvHeads: 2,
        maxSeqLen: 12,
        ...extra,
      });
      const model = new TransformerLM(config).eval();
      const ids = [3, 1, 4, 1, 5, 9, 2, 6];
      const full = scope(() => model.forward(tensor([ids], undefined, { dtype: 'i32' })));
      const expected = await values(full);
      full.dispose();
      const cache = KVCache.forModel(config);
      const steps: number[][] = [];
      for (const chunk of [[3, 1, 4], [1], [5, 9], [2], [6]]) {
        const offset = cache.length;
        const logits = model.forward(tensor([chunk], undefined, { dtype: 'i32' }), { offset, cache });
        const rows = await values(logits);
        for (let i = 0; i < chunk.length; i++) steps.push(rows.slice(i * 13, (i + 1) * 13));
        logits.dispose();
      }
      expect(cache.length).toBe(8);
      const worst = Math.max(...steps.flat().map((value, i) => Math.abs(value - expected[i])));
      expect(worst).toBeLessThan(1e-5);
      cache.dispose();
      model.dispose();
    });
  }

  it('leaves no tensors behind', () => {
    const before = backend.liveCount();
    const cache = new KVCache(shape);
    const copy = cache.clone();
    cache.dispose();
    copy.dispose();
    expect(backend.liveCount()).toBe(before);
  });

  it('frees the storage of a cache dropped without dispose once it is collected', async () => {
    if (!gc) throw new Error('run the tests with node --expose-gc (vitest.config.ts passes it)');
    const before = backend.liveCount();
    const allocate = () => new KVCache(shape).bytes();
    expect(allocate()).toBeGreaterThan(0);
    expect(backend.liveCount()).toBe(before + 2 * shape.numLayers);
    // Finalizers run after a collection, on a later turn of the event loop: collect until they have (or give up).
    for (let round = 0; round < 50 && backend.liveCount() !== before; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(backend.liveCount()).toBe(before);
  });

  it('reserves positions for a step that writes them itself, handing out the storage', async () => {
    const cache = new KVCache(shape);
    const k = kv(2, 1);
    cache.update(1, k, k, 0);
    const { k: keys, v: vals } = cache.reserve(1, 2, 1);
    expect(keys.shape).toEqual([1, 8, 2, 4]);
    expect((await values(keys)).slice(0, 16)).toEqual(await values(k));
    expect(cache.length).toBe(0);
    expect(() => cache.reserve(1, 2, 1)).toThrow(
      /layer 1 holds 3 of 8 positions; expected offset 3 and a count of 1 to 5, got offset 2/,
    );
    expect(() => cache.reserve(0, 0, 9)).toThrow(/a count of 1 to 8, got offset 0 and count 9/);
    expect(() => cache.reserve(0, 0, 0)).toThrow(/got offset 0 and count 0/);
    cache.reserve(0, 0, 3);
    expect(cache.length).toBe(3);
    for (const t of [k, keys, vals]) t.dispose();
    cache.dispose();
  });

  it('refuses writes that do not fit, naming what was expected', () => {
    const cache = new KVCache(shape);
    const k = kv(3, 1);
    expect(() => cache.update(0, k, k, 2)).toThrow(/holds 0 positions, so new keys go at offset 0, got 2/);
    expect(() => cache.update(2, k, k, 0)).toThrow(/layer must be an integer in \[0, 1\], got 2/);
    const wrong = randn([1, 3, 4, 2], { seed: 1 });
    expect(() => cache.append(0, wrong, wrong)).toThrow(/expected k and v of shape \[1, T, 2, 4\]/);
    cache.append(0, k, k);
    cache.append(0, k, k);
    expect(() => cache.append(0, k, k)).toThrow(/positions 6..8 of layer 0 exceed the capacity of 8/);
    expect(() => cache.truncate(1)).toThrow(/integer in \[0, 0\]/);
    expect(() => new KVCache({ ...shape, capacity: 0 })).toThrow(/capacity must be an integer ≥ 1, got 0/);
    for (const t of [k, wrong]) t.dispose();
    cache.dispose();
  });
});
