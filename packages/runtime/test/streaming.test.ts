import { describe, expect, it } from 'vitest';
import { backends, collect, describeEachBackend, stories } from './fixtures';

describeEachBackend(
  (name) => `streaming generation on ${name}`,
  (suite) => {
    it('keeps the live tensor count constant over 300 tokens and frees the cache at the end', async () => {
      const before = suite.device.liveCount();
      const counts: number[] = [];
      for (const sampling of [{ temperature: 0 }, { temperature: 1, topK: 40, seed: 1 }]) {
        counts.length = 0;
        const events = suite.generator.generate('Once upon a time', {
          sampling,
          stop: { maxNewTokens: 300, eosTokenIds: [] },
        });
        for await (const event of events) {
          if (event.type === 'token') counts.push(suite.device.liveCount());
        }
        expect(counts.length).toBe(300);
        expect(new Set(counts)).toEqual(new Set([counts[0]]));
        expect(suite.device.liveCount()).toBe(before);
      }
    });

    it('streams text that adds up to the summary and reports timings', async () => {
      const { events, stats } = await collect(
        suite.generator.generate('Lily and Tom', {
          sampling: { temperature: 0 },
          stop: { maxNewTokens: 40 },
        }),
      );
      expect(events.map((e) => e.text).join('')).toBe(stats.text);
      expect(events.filter((e) => e.type === 'token').map((e) => e.token)).toEqual(stats.tokens);
      expect(stats.text.startsWith(' were playing in the park')).toBe(true);
      expect(stats.timings.timeToFirstTokenMs).toBeGreaterThan(0);
      expect(stats.timings.prefillTokensPerSecond).toBeGreaterThan(0);
      expect(stats.timings.decodeTokensPerSecond).toBeGreaterThan(0);
    });

    it('stops at a stop string spanning tokens, without printing it', async () => {
      const { stats } = await collect(
        suite.generator.generate('Once upon a time', {
          sampling: { temperature: 0 },
          stop: { stopStrings: ['little girl'], maxNewTokens: 50 },
        }),
      );
      expect(stats.stopReason).toBe('stop-string');
      expect(stats.text).toBe(', there was a ');
    });

    it('ends with the reason aborted when the signal fires, and frees the cache when left early', async () => {
      const before = suite.device.liveCount();
      const controller = new AbortController();
      const events = suite.generator.generate('Once upon a time', {
        sampling: { temperature: 0 },
        signal: controller.signal,
      });
      let tokens = 0;
      let reason: string | undefined;
      for await (const event of events) {
        if (event.type === 'token' && ++tokens === 5) controller.abort();
        if (event.type === 'done') reason = event.stats.stopReason;
      }
      expect([tokens, reason]).toEqual([5, 'aborted']);
      for await (const event of suite.generator.generate('Once upon a time', {
        sampling: { temperature: 0 },
      })) {
        if (event.type === 'token') break;
      }
      expect(suite.device.liveCount()).toBe(before);
    });

    it('stops with context-full when the cache has no position left', async () => {
      const chat = suite.generator.chat({ capacity: 24 });
      const { stats } = await collect(
        chat.send('Hi', { sampling: { temperature: 0 }, stop: { eosTokenIds: [] } }),
      );
      expect(stats.stopReason).toBe('context-full');
      // every position holds a token, and the last position's output is one more
      expect(stats.promptTokens.length + stats.tokens.length).toBe(25);
      expect(chat.cachedTokens.length).toBe(24);
      chat.dispose();
    });
  },
);

describe('sampling with a seed', () => {
  it('gives the same tokens on every backend, and other tokens with another seed', async () => {
    const runs: number[][] = [];
    for (const [, backend] of backends) {
      if (!backend) continue;
      const generator = stories(backend);
      for (const seed of [42, 43]) {
        const { stats } = await collect(
          generator.generate('Once upon a time', {
            sampling: { temperature: 0.9, topP: 0.9, repetitionPenalty: 1.1, seed },
            stop: { maxNewTokens: 60 },
          }),
        );
        runs.push([...stats.tokens]);
      }
      generator.model.dispose();
    }
    expect(runs[0]).not.toEqual(runs[1]);
    for (let i = 2; i < runs.length; i++) expect(runs[i]).toEqual(runs[i % 2]);
  });
});
