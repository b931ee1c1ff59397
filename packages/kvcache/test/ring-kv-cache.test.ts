import { CpuBackend } from '@loom/backend-cpu';
import { makeConfig, TransformerLM } from '@loom/nn';
import { randn, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { KVCache, kvCacheBytes, RingKVCache } from '../src/index';

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

const WINDOW = 4;
const config = makeConfig('llama', {
  vocabSize: 20,
  dim: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  maxSeqLen: 32,
  slidingWindow: WINDOW,
});
const TOKENS = [3, 7, 1, 19, 4, 4, 12, 0, 9, 15, 2, 8, 11, 5, 6, 17, 13];

function ids(list: readonly number[]): Tensor {
  return tensor([list], undefined, { dtype: 'i32' });
}

/** Logits [T, vocab] of one call as rows of numbers. */
async function rows(logits: Tensor): Promise<number[][]> {
  const [, t, vocab] = logits.shape;
  const data = await logits.data();
  logits.dispose();
  return Array.from({ length: t }, (_, i) => Array.from(data.subarray(i * vocab, (i + 1) * vocab)));
}

function worst(a: readonly number[][], b: readonly number[][]): number {
  let max = 0;
  a.forEach((row, i) => {
    row.forEach((x, j) => {
      max = Math.max(max, Math.abs(x - b[i][j]));
    });
  });
  return max;
}

describe('RingKVCache', () => {
  it('decodes past the wrap-around like full recomputation with the window mask, its memory flat', async () => {
    const model = new TransformerLM(config, { seed: 5 }).eval();
    const full = await rows(model.forward(ids(TOKENS)));
    const cache = RingKVCache.forModel(config);
    const bytes = kvCacheBytes({
      batch: 1,
      seqLen: WINDOW,
      layers: 2,
      kvHeads: 2,
      headDim: 8,
      bytesPerElement: 4,
    });
    expect(cache.bytes()).toBe(bytes);
    // A prefill of 3, one-token steps past the wrap, a 3-token chunk after it (its keys reorder the wrapped ring),
    // a chunk longer than the window, then more single steps.
    const chunks = [3, 1, 1, 1, 1, 1, 3, 5, 1];
    let position = 0;
    let live = 0;
    for (const size of chunks) {
      const tokens = TOKENS.slice(position, position + size);
      const got = await rows(scope(() => model.forward(ids(tokens), { offset: cache.length, cache })));
      expect(worst(got, full.slice(position, position + size))).toBeLessThan(1e-4);
      position += size;
      expect(cache.length).toBe(position);
      expect(cache.bytes()).toBe(bytes);
      if (position > WINDOW) {
        if (live === 0) live = backend.liveCount();
        expect(backend.liveCount()).toBe(live);
      }
    }
    expect(position).toBe(TOKENS.length);
    cache.dispose();
  });

  it('is needed: the same model without its window gives other logits once a token sees past the window', async () => {
    const windowed = new TransformerLM(config, { seed: 5 }).eval();
    const unlimited = new TransformerLM({ ...config, slidingWindow: undefined }, { seed: 5 }).eval();
    const a = await rows(windowed.forward(ids(TOKENS)));
    const b = await rows(unlimited.forward(ids(TOKENS)));
    expect(worst(a.slice(0, WINDOW), b.slice(0, WINDOW))).toBeLessThan(1e-5);
    expect(worst(a.slice(WINDOW), b.slice(WINDOW))).toBeGreaterThan(1e-3);
  });

  it('keeps position p in slot p mod window and returns the slots after one token', async () => {
    const cache = new RingKVCache({ numLayers: 1, numKvHeads: 1, headDim: 1, window: 3 });
    const one = (value: number) => tensor([value], [1, 1, 1, 1]);
    for (let p = 0; p < 5; p++) {
      const stored = scope(() => cache.update(0, one(10 + p), one(20 + p), p));
      expect(stored.layout).toEqual({ kind: 'slots', filled: Math.min(p + 1, 3) });
      if (p === 4) expect(Array.from(await stored.k.data())).toEqual([13, 14, 12]);
    }
    const chunk = tensor([15, 16], [1, 2, 1, 1]);
    const stored = cache.update(0, chunk, chunk, 5);
    expect(stored.layout).toEqual({ kind: 'positions', start: 2 });
    expect(Array.from(await stored.k.data())).toEqual([12, 13, 14, 15, 16]);
    cache.dispose();
  });

  it('refuses a wrong offset, a wrong shape, a truncation into overwritten slots and a config without a window', () => {
    const cache = new RingKVCache({ numLayers: 2, numKvHeads: 2, headDim: 4, window: 2 });
    const k = randn([1, 3, 2, 4], { seed: 1 });
    expect(() => cache.update(0, k, k, 1)).toThrow(/has seen 0 positions, so new keys go at offset 0, got 1/);
    expect(() => cache.update(0, randn([1, 3, 3, 4], { seed: 2 }), k, 0)).toThrow(
      /expected k and v of shape/,
    );
    cache.update(0, k, k, 0);
    cache.update(1, k, k, 0);
    expect(() => cache.truncate(2)).toThrow(/length must be an integer in \[3, 3\]/);
    expect(() => new RingKVCache({ numLayers: 1, numKvHeads: 1, headDim: 1, window: 0 })).toThrow(
      /window must be/,
    );
    const { slidingWindow: _, ...unwindowed } = config;
    expect(() => RingKVCache.forModel(unwindowed)).toThrow(/no slidingWindow; use KVCache.forModel/);
    cache.dispose();
  });

  it('holds window positions where a full cache holds the whole context', () => {
    const ring = RingKVCache.forModel(config);
    const whole = KVCache.forModel(config);
    expect(whole.bytes()).toBe((ring.bytes() * config.maxSeqLen) / WINDOW);
    ring.dispose();
    whole.dispose();
  });
});
