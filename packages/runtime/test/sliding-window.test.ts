import { CpuBackend } from '@loom/backend-cpu';
import { kvCacheBytes, RingKVCache } from '@loom/kvcache';
import { makeConfig, TransformerLM } from '@loom/nn';
import { setBackend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceSession, TextGenerator } from '../src/index';
import { collect, maxDiff, recomputed, tok512 } from './fixtures';

const WINDOW = 8;
const config = makeConfig('llama', {
  vocabSize: 512,
  dim: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 64,
  maxSeqLen: 96,
  slidingWindow: WINDOW,
});
/** The bytes of a cache of WINDOW positions of this model, float32. */
const ringBytes = kvCacheBytes({
  batch: 1,
  seqLen: WINDOW,
  layers: 2,
  kvHeads: 2,
  headDim: 8,
  bytesPerElement: 4,
});

let model: TransformerLM;
beforeAll(() => {
  setBackend(new CpuBackend());
  model = new TransformerLM(config, { seed: 11 }).eval();
});
afterAll(() => model.dispose());

/** Index of the largest value. */
function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/**
 * Feeds `tokens` after those the session holds, one chunk at a time; the largest difference of each chunk's logits
 * from full recomputation.
 */
async function feedAndCompare(
  session: InferenceSession,
  tokens: readonly number[],
  chunks: readonly number[],
) {
  let worst = 0;
  let at = session.tokens.length;
  for (const size of chunks) {
    const logits = session.feed(tokens.slice(at, at + size));
    at += size;
    worst = Math.max(worst, maxDiff(await logits.float32Data(), await recomputed(model, session.tokens)));
    logits.dispose();
  }
  return worst;
}

const TOKENS = Array.from({ length: 40 }, (_, i) => (i * 37 + 5) % 512);

describe('a sliding-window model in the runtime', () => {
  it('decodes greedily past the wrap-around as full recomputation with the window mask does', async () => {
    const generator = new TextGenerator(model, tok512());
    const prompt = TOKENS.slice(0, 5);
    const steps = 3 * WINDOW;
    const { events, stats } = await collect(
      generator.generate(prompt, {
        sampling: { temperature: 0 },
        stop: { maxNewTokens: steps, eosTokenIds: [] },
        withLogits: true,
      }),
    );
    expect(stats.tokens.length).toBe(steps);
    const tokens = [...prompt];
    let worst = 0;
    for (const event of events) {
      if (event.type !== 'token') continue;
      if (!event.logits) throw new Error('expected logits on every token event');
      const reference = await recomputed(model, tokens);
      worst = Math.max(worst, maxDiff(event.logits, reference));
      expect(event.token).toBe(argmax(reference));
      tokens.push(event.token);
    }
    expect(worst).toBeLessThan(1e-4);
  });

  it('keeps a ring of W positions whose bytes stay flat as the sequence grows', async () => {
    const session = new InferenceSession(model);
    expect(session.cache).toBeInstanceOf(RingKVCache);
    expect(session.capacity).toBe(config.maxSeqLen);
    expect(session.cache.bytes()).toBe(ringBytes);
    // A prefill shorter than the window, single steps across the wrap, a chunk longer than the window.
    const worst = await feedAndCompare(session, TOKENS, [5, 1, 1, 1, 1, 1, 1, 12, 1, 1]);
    expect(worst).toBeLessThan(1e-4);
    expect(session.tokens.length).toBe(25);
    expect(session.remaining).toBe(config.maxSeqLen - 25);
    expect(session.cache.bytes()).toBe(ringBytes);
    session.dispose();
  });

  it('keeps a chat going over a wrapped ring, each turn as recomputation gives', async () => {
    const chat = new TextGenerator(model, tok512()).chat({ template: 'plain' });
    for (const message of ['Tell me a story.', 'And then?']) {
      const { events, stats } = await collect(
        chat.send(message, {
          sampling: { temperature: 0 },
          stop: { maxNewTokens: 10, eosTokenIds: [] },
          withLogits: true,
        }),
      );
      expect(stats.promptTokens.length + 10).toBeGreaterThan(WINDOW);
      const tokens = [...stats.promptTokens];
      let worst = 0;
      for (const event of events) {
        if (event.type !== 'token' || !event.logits) continue;
        worst = Math.max(worst, maxDiff(event.logits, await recomputed(model, tokens)));
        tokens.push(event.token);
      }
      expect(tokens.length).toBe(stats.promptTokens.length + 10);
      expect(worst).toBeLessThan(1e-4);
      expect(chat.cachedTokens).toEqual(tokens.slice(0, -1));
    }
    chat.dispose();
  });

  it('uses a plain cache when the capacity is no longer than the window', () => {
    const session = new InferenceSession(model, { capacity: WINDOW });
    expect(session.cache).not.toBeInstanceOf(RingKVCache);
    expect(session.cache.bytes()).toBe(ringBytes);
    session.dispose();
  });

  it('truncates into overwritten slots by refilling, and clones, both continuing as recomputation does', async () => {
    const session = new InferenceSession(model);
    await feedAndCompare(session, TOKENS, [20]);
    const fork = session.clone();
    session.truncate(6); // the ring wrapped: positions 0..5 are refilled into a new ring
    expect(session.tokens).toEqual(TOKENS.slice(0, 6));
    const other = [...TOKENS.slice(0, 6), ...TOKENS.slice(25, 40)];
    expect(await feedAndCompare(session, other, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1])).toBeLessThan(1e-4);
    expect(session.cache.bytes()).toBe(ringBytes);
    session.truncate(session.tokens.length); // the current length: nothing to refill
    expect(session.tokens.length).toBe(16);
    expect(fork.tokens).toEqual(TOKENS.slice(0, 20));
    expect(await feedAndCompare(fork, TOKENS, [1, 3, 1])).toBeLessThan(1e-4);
    expect(() => session.truncate(17)).toThrow(/length must be an integer in \[0, 16\]/);
    session.dispose();
    fork.dispose();
  });
});
