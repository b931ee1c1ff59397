import { expect, it } from 'vitest';
import type { ChatEvent, TextGenerator } from '../src/index';
import { collect, describeEachBackend, maxDiff, recomputed } from './fixtures';

/** Cached decode steps checked per generation (fewer on WebGPU, whose full recomputes are slower here). */
const STEPS: Record<string, number> = { cpu: 120, webgpu: 40 };

/** Checks every token event's logits against a full forward pass over the tokens before it. */
async function expectRecomputeParity(
  generator: TextGenerator,
  before: readonly number[],
  events: readonly ChatEvent[],
): Promise<number[]> {
  const tokens = [...before];
  let worst = 0;
  for (const event of events) {
    if (event.type !== 'token') continue;
    if (!event.logits) throw new Error('expected logits on every token event');
    worst = Math.max(worst, maxDiff(event.logits, await recomputed(generator.model, tokens)));
    tokens.push(event.token);
  }
  expect(worst).toBeLessThan(1e-4);
  return tokens;
}

describeEachBackend(
  (name) => `cached decode equals full recompute on ${name}`,
  (suite) => {
    it('at every step of a generation', async () => {
      const prompt = suite.generator.encode('Once upon a time');
      const { events, stats } = await collect(
        suite.generator.generate(prompt, {
          sampling: { temperature: 0.8, seed: 3 },
          stop: { maxNewTokens: STEPS[suite.name], eosTokenIds: [] },
          withLogits: true,
        }),
      );
      expect(stats.tokens.length).toBe(STEPS[suite.name]);
      await expectRecomputeParity(suite.generator, prompt, events);
    });

    it('across three turns of a chat session, prefilling only what is new', async () => {
      const chat = suite.generator.chat({ template: 'plain' });
      const turns = ['Tell me a story.', 'What did the cat do?', 'And then?'];
      for (const [i, message] of turns.entries()) {
        const cachedBefore = chat.cachedTokens.length;
        const { events, stats } = await collect(
          chat.send(message, {
            sampling: { temperature: 0 },
            stop: { maxNewTokens: STEPS[suite.name] / 4 },
            withLogits: true,
          }),
        );
        if (i > 0) {
          expect(stats.reusedTokens).toBeGreaterThan(0);
          expect(stats.reusedTokens).toBeLessThanOrEqual(cachedBefore);
          expect(stats.promptTokens.length - stats.reusedTokens).toBeLessThan(stats.promptTokens.length / 2);
        }
        const history = await expectRecomputeParity(suite.generator, stats.promptTokens, events);
        expect(chat.cachedTokens).toEqual(history.slice(0, -1));
      }
      expect(chat.messages.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'user',
        'assistant',
      ]);
      chat.dispose();
    });

    it('after truncating the cache to a shared prefix', async () => {
      const session = suite.generator.session();
      const story = suite.generator.encode('Once upon a time there was a big dog');
      const other = suite.generator.encode(' cat who liked to sing');
      session.feed(story).dispose();
      const fork = session.clone();
      session.truncate(6);
      const rows: Float32Array[] = [];
      for (const token of other.slice(1)) {
        const logits = session.feed([token]);
        rows.push(new Float32Array(await logits.data()));
        logits.dispose();
      }
      for (let i = 0; i < rows.length; i++) {
        const expected = await recomputed(suite.generator.model, [
          ...story.slice(0, 6),
          ...other.slice(1, i + 2),
        ]);
        expect(maxDiff(rows[i], expected)).toBeLessThan(1e-4);
      }
      const continued = fork.feed([other[1]]);
      expect(
        maxDiff(await continued.data(), await recomputed(suite.generator.model, [...story, other[1]])),
      ).toBeLessThan(1e-4);
      continued.dispose();
      session.dispose();
      fork.dispose();
    });
  },
);
