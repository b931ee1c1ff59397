import { getBackend } from '@loom/tensor';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedModel } from '../src/load';
import { alone, loadStories, startServer } from './helpers';

let served: ServedModel;
const model = 'stories260K.bin';
const prompts = [
  'Once upon a time',
  'Lily and Tom',
  'The little dog',
  'One day, a girl named Sue',
  'Ben wanted to',
  'In the park',
  'The sun was',
  'Mom said',
];

beforeAll(async () => {
  served = await loadStories();
});

afterAll(() => served.model.dispose());

/** A metric's value in the Prometheus text of /metrics. */
async function metric(baseURL: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseURL}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`metric ${name} is missing from /metrics`);
  return Number(line.slice(name.length + 1));
}

async function streamText(client: OpenAI, prompt: string, maxTokens: number): Promise<string> {
  const stream = await client.completions.create({
    model,
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
  return text;
}

describe('continuous batching', () => {
  it('8 clients streaming at once each get exactly the tokens they get alone, in shared forward passes', async () => {
    const expected = await Promise.all(
      prompts.map((p, i) => alone(served, served.tokenizer.encode(p, { bos: true }), 40 + 10 * i)),
    );
    const live = getBackend().liveCount();
    const { server, client, baseURL } = await startServer(served, { parallel: 8, prefillChunk: 2 });
    try {
      const texts = await Promise.all(prompts.map((p, i) => streamText(client, p, 40 + 10 * i)));
      expect(texts).toEqual(expected.map((e) => e.text));
      const generated = await metric(baseURL, 'loom_completion_tokens_total');
      const steps = await metric(baseURL, 'loom_batch_steps_total');
      expect(generated).toBe(expected.reduce((n, e) => n + e.tokens.length, 0));
      // One at a time would take a step per token and more; batched, the 8 sequences share steps.
      expect(steps).toBeLessThan(generated / 2);
    } finally {
      await server.close();
    }
    expect(getBackend().liveCount()).toBe(live);
  });

  it('greedy clients get the same tokens whether their batch takes argmaxes on the device or reads every row', async () => {
    // All greedy: each step reads back one argmax a row. One client asking for log-probabilities makes the steps
    // it shares read every row of logits for the sampler instead.
    const expected = await Promise.all(
      prompts.slice(0, 4).map((p) => alone(served, served.tokenizer.encode(p, { bos: true }), 30)),
    );
    const { server, client } = await startServer(served, { parallel: 8, prefillChunk: 2 });
    try {
      const greedy = await Promise.all(prompts.slice(0, 4).map((p) => streamText(client, p, 30)));
      expect(greedy).toEqual(expected.map((e) => e.text));
      const [withLogprobs, ...others] = await Promise.all([
        client.completions.create({ model, prompt: prompts[0], max_tokens: 30, temperature: 0, logprobs: 2 }),
        ...prompts.slice(1, 4).map((p) => streamText(client, p, 30)),
      ]);
      expect([withLogprobs.choices[0].text, ...others]).toEqual(expected.map((e) => e.text));
      const logprobs = withLogprobs.choices[0].logprobs?.token_logprobs ?? [];
      expect(logprobs).toHaveLength(expected[0].tokens.length);
      for (const lp of logprobs) expect(lp).toBeLessThanOrEqual(0);
    } finally {
      await server.close();
    }
  });

  it('a client aborting mid-stream frees its sequence and cache for the next request', async () => {
    const live = getBackend().liveCount();
    const { server, client, baseURL } = await startServer(served, { parallel: 1, queue: 4 });
    try {
      const stream = await client.completions.create({
        model,
        prompt: 'Once upon a time',
        max_tokens: 500,
        temperature: 0,
        stream: true,
      });
      let chunks = 0;
      for await (const _ of stream) {
        if (++chunks === 3) break; // leaving the loop aborts the request
      }
      await server.batcher.idle();
      expect(await metric(baseURL, 'loom_requests_aborted_total')).toBe(1);
      expect(await metric(baseURL, 'loom_completion_tokens_total')).toBeLessThan(500);
      expect(server.batcher.running).toBe(0);
      expect(getBackend().liveCount()).toBe(live);
      const expected = await alone(served, served.tokenizer.encode('Lily and Tom', { bos: true }), 30);
      expect(await streamText(client, 'Lily and Tom', 30)).toBe(expected.text);
    } finally {
      await server.close();
    }
    expect(getBackend().liveCount()).toBe(live);
  });

  it('a burst beyond the queue gets 429 with Retry-After, and every other request succeeds', async () => {
    const live = getBackend().liveCount();
    const { server, baseURL } = await startServer(served, { parallel: 2, queue: 2 });
    const expected = await alone(served, served.tokenizer.encode('The little dog', { bos: true }), 100);
    try {
      const replies = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await fetch(`${baseURL}/v1/completions`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ model, prompt: 'The little dog', max_tokens: 100, temperature: 0 }),
          });
          return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
        }),
      );
      const refused = replies.filter((r) => r.status === 429);
      const served200 = replies.filter((r) => r.status === 200);
      expect(refused.length + served200.length).toBe(replies.length);
      expect(refused.length).toBeGreaterThan(0);
      expect(served200.length).toBeGreaterThanOrEqual(4);
      for (const r of refused) {
        expect(r.retryAfter).toBe('1');
        expect(r.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      }
      for (const r of served200) expect(r.body.choices[0].text).toBe(expected.text);
    } finally {
      await server.close();
    }
    expect(getBackend().liveCount()).toBe(live);
  });
});
