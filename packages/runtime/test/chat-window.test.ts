import { encodeChat } from '@loom/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DroppedTurns, TextGenerator } from '../src/index';
import { backendNamed, collect, maxDiff, recomputed, stories } from './fixtures';

const cpu = await backendNamed('cpu');
const capacity = 160;
const answer = { sampling: { temperature: 0 }, stop: { maxNewTokens: 16 }, withLogits: true };

describe('a chat whose history outgrows its context', () => {
  let generator: TextGenerator;
  beforeAll(() => {
    if (!cpu) throw new Error('the CPU backend is always there');
    generator = stories(cpu);
  });
  afterAll(() => generator.model.dispose());

  it('drops its oldest turns, keeps the system message and prefills the kept history correctly', async () => {
    const chat = generator.chat({ system: 'You tell stories.', capacity });
    const notices: DroppedTurns[] = [];
    const animals = ['cat', 'dog', 'bird', 'fish', 'frog', 'duck'];
    for (let turn = 0; turn < 30; turn++) {
      const { events, stats } = await collect(chat.send(`What did the ${animals[turn % 6]} do?`, answer));
      const notice = events.find((e): e is DroppedTurns => e.type === 'dropped');
      if (notice) notices.push(notice);
      expect(stats.tokens.length).toBeGreaterThan(0);
      expect(stats.promptTokens.length + 16).toBeLessThanOrEqual(capacity);
      expect(chat.cachedTokens.length).toBeLessThanOrEqual(capacity);
      // The cache holds the prompt as the kept history renders it, then the answer's tokens but the last.
      expect(chat.cachedTokens).toEqual([...stats.promptTokens, ...stats.tokens.slice(0, -1)]);
      expect(stats.promptTokens).toEqual(
        encodeChat(generator.tokenizer, 'plain', chat.messages.slice(0, -1)),
      );
      if (notice) {
        const first = events.find((e) => e.type === 'token');
        if (first?.type !== 'token' || !first.logits) throw new Error('expected a first token with logits');
        const expected = await recomputed(generator.model, stats.promptTokens);
        expect(maxDiff(first.logits, expected)).toBeLessThan(1e-4);
      }
    }
    expect(notices.length).toBeGreaterThan(0);
    for (const notice of notices) {
      expect(notice.messages.map((m) => m.role)).toEqual(
        Array.from({ length: notice.turns }, () => ['user', 'assistant']).flat(),
      );
    }
    expect(chat.messages[0]).toEqual({ role: 'system', content: 'You tell stories.' });
    expect(chat.messages.at(-2)).toEqual({ role: 'user', content: 'What did the duck do?' });
    chat.dispose();
  });

  it('throws only when the message does not fit even alone, and stays usable', async () => {
    const chat = generator.chat({ system: 'You tell stories.', capacity });
    await collect(chat.send('Hi', answer));
    expect(() => chat.send('the cat sat. '.repeat(60), answer)).toThrow(
      /ChatSession: the message takes \d+ tokens with the template and the system message but the context holds 160 positions; shorten it or use a larger capacity/,
    );
    // An answer longer than the whole context drops every turn, then runs until the context is full.
    const { events, stats } = await collect(
      chat.send('Go on.', { sampling: { temperature: 0 }, stop: { maxNewTokens: 500, eosTokenIds: [] } }),
    );
    expect(events[0]).toMatchObject({ type: 'dropped', turns: 1 });
    expect(stats.stopReason).toBe('context-full');
    expect(chat.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    chat.dispose();
  });
});
