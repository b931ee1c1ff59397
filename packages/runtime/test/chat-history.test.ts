import { encodeChat } from '@loom/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DroppedTurns, TextGenerator } from '../src/index';
import { backendNamed, collect, stories } from './fixtures';

const cpu = await backendNamed('cpu');
const answer = { sampling: { temperature: 0 }, stop: { maxNewTokens: 12 } };

describe('a chat continued from restored history', () => {
  let generator: TextGenerator;
  beforeAll(() => {
    if (!cpu) throw new Error('the CPU backend is always there');
    generator = stories(cpu);
  });
  afterAll(() => generator.model.dispose());

  it('prefills the restored turns with the new message, and answers as the live conversation did', async () => {
    const live = generator.chat({ system: 'You tell stories.' });
    await collect(live.send('Tell me about a cat.', answer));
    const history = live.messages.slice(1);
    const next = await collect(live.send('And then?', answer));
    live.dispose();

    const restored = generator.chat({ system: 'You tell stories.', history });
    expect(restored.messages.slice(1)).toEqual(history);
    const { stats } = await collect(restored.send('And then?', answer));
    const expected = encodeChat(generator.tokenizer, 'plain', [
      { role: 'system', content: 'You tell stories.' },
      ...history,
      { role: 'user', content: 'And then?' },
    ]);
    expect(stats.promptTokens).toEqual(expected);
    expect(stats.reusedTokens).toBe(0); // nothing was in the cache: all of it was prefilled
    expect(stats.tokens).toEqual(next.stats.tokens);
    restored.dispose();
  });

  it('drops the oldest restored turns that do not fit, with the notice', async () => {
    const history = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: i % 2 === 0 ? `What did animal ${i} do next in the story?` : 'It ran to the park and played.',
    }));
    const chat = generator.chat({ history, capacity: 96 });
    const { events, stats } = await collect(chat.send('Go on.', answer));
    const notice = events.find((e): e is DroppedTurns => e.type === 'dropped');
    expect(notice?.turns).toBeGreaterThan(0);
    expect(notice?.messages).toEqual(history.slice(0, 2 * (notice?.turns ?? 0)));
    expect(stats.promptTokens.length + 12).toBeLessThanOrEqual(96);
    chat.dispose();
  });

  it('refuses history that is not whole alternating turns, naming the message', () => {
    expect(() => generator.chat({ history: [{ role: 'user', content: 'hi' }] })).toThrow(
      'ChatSession: history must be whole turns (a user message and its answer each), got 1 messages',
    );
    const swapped = [
      { role: 'assistant' as const, content: 'hello' },
      { role: 'user' as const, content: 'hi' },
    ];
    expect(() => generator.chat({ history: swapped })).toThrow(
      'ChatSession: history[0] must be a user message (the turns alternate, user first), got assistant',
    );
  });
});
