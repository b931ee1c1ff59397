import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, transformerFromTensors } from '@loom/models';
import { type GenerationStats, TextGenerator } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { loadTokenizer } from '@loom/tokenizer';
import { afterAll, describe, expect, it } from 'vitest';
import { type StoryEvent, StorySession } from '../src/worker/story-session';

setBackend(new CpuBackend());
const data = join(import.meta.dirname, '../../../../shared/data');
const generator = new TextGenerator(
  transformerFromTensors(loadModelFile(join(data, 'models/stories260K.bin'))),
  loadTokenizer(readFileSync(join(data, 'models/tok512.bin'))),
);
const [reference] = JSON.parse(readFileSync(join(data, 'golden/stories260K.json'), 'utf8')).greedy;
const greedy = { sampling: { temperature: 0 } };

async function collect(events: AsyncGenerator<StoryEvent, void>) {
  const seen: StoryEvent[] = [];
  for await (const event of events) seen.push(event);
  const done = seen.at(-1);
  if (done?.type !== 'done') throw new Error('the turn did not end with a done event');
  return { seen, stats: done.stats as GenerationStats };
}

describe('StorySession', () => {
  afterAll(() => generator.model.dispose());

  it('continues the text as a plain completion: the golden greedy reference', async () => {
    const story = new StorySession(generator);
    const maxNewTokens = reference.steps - reference.prompt_tokens.length + 1;
    const { stats } = await collect(story.send(reference.prompt, { ...greedy, stop: { maxNewTokens } }));
    expect(reference.prompt + stats.text).toBe(reference.text);
    story.dispose();
  });

  it('prefills only the new turn, and continues as a fresh run over the whole story would', async () => {
    const story = new StorySession(generator);
    const first = await collect(story.send('Once upon a time', { ...greedy, stop: { maxNewTokens: 40 } }));
    const cached = story.cachedTokens.length;
    const { stats } = await collect(story.send('The next day', { ...greedy, stop: { maxNewTokens: 20 } }));
    expect(stats.reusedTokens).toBeGreaterThanOrEqual(cached - 1);
    expect(stats.promptTokens.length - stats.reusedTokens).toBeLessThanOrEqual(6);
    const whole = `Once upon a time${first.stats.text} The next day`;
    let fresh = '';
    for await (const event of generator.generate(whole, { ...greedy, stop: { maxNewTokens: 20 } }))
      fresh += event.text;
    expect(stats.text).toBe(fresh);
    story.dispose();
  });

  it('continues restored turns: the first turn prefills the whole story and goes on as the live one did', async () => {
    const live = new StorySession(generator);
    const first = await collect(live.send('Once upon a time', { ...greedy, stop: { maxNewTokens: 30 } }));
    const second = await collect(live.send('The next day', { ...greedy, stop: { maxNewTokens: 20 } }));
    live.dispose();
    const history = [
      { role: 'user' as const, text: 'Once upon a time' },
      { role: 'assistant' as const, text: first.stats.text },
    ];
    const restored = new StorySession(generator, { history });
    expect(restored.story).toBe(`Once upon a time${first.stats.text}`);
    const { stats } = await collect(restored.send('The next day', { ...greedy, stop: { maxNewTokens: 20 } }));
    expect(stats.reusedTokens).toBe(0);
    expect(stats.promptTokens).toEqual(generator.encode(`Once upon a time${first.stats.text} The next day`));
    expect(stats.tokens).toEqual(second.stats.tokens);
    restored.dispose();
  });

  it('drops the oldest tokens of a story that leaves no room for the reply, with a notice', async () => {
    const story = new StorySession(generator);
    const long = 'Lily and Tom played in the park with a big red ball. '.repeat(30);
    const promptTokens = generator.encode(long).length;
    const maxNewTokens = 200;
    const { seen, stats } = await collect(story.send(long, { ...greedy, stop: { maxNewTokens } }));
    expect(seen[0]).toEqual({ type: 'dropped-text', tokens: promptTokens + maxNewTokens - story.capacity });
    expect(stats.promptTokens.length).toBe(story.capacity - maxNewTokens);
    expect(stats.promptTokens[0]).toBe(generator.tokenizer.bos);
    story.dispose();
  });

  it('ends with the stop reason aborted when the signal fires', async () => {
    const story = new StorySession(generator);
    const controller = new AbortController();
    let tokens = 0;
    for await (const event of story.send('Once upon a time', { signal: controller.signal })) {
      if (event.type === 'token' && ++tokens === 3) controller.abort();
      if (event.type === 'done') expect(event.stats.stopReason).toBe('aborted');
    }
    expect(tokens).toBe(3);
    story.dispose();
  });
});
