import { TextGenerator } from '@loom/runtime';
import type { SamplerConfig } from '@loom/sampler';
import { encodeChat } from '@loom/tokenizer';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedModel } from '../src/load';
import type { LoomServer } from '../src/server';
import { alone, golden, loadStories, startServer } from './helpers';

let served: ServedModel;
let server: LoomServer;
let client: OpenAI;
const model = 'stories260K.bin';

beforeAll(async () => {
  served = await loadStories();
  ({ server, client } = await startServer(served));
});

afterAll(async () => {
  await server.close();
  served.model.dispose();
});

/** The prompt ids of a chat, as the server renders them (the plain template for a story model). */
const chatIds = (content: string) => encodeChat(served.tokenizer, 'plain', [{ role: 'user', content }]);

describe('completions with the openai client', () => {
  it('gives the golden greedy story, with usage counts', async () => {
    const [reference] = golden.greedy;
    const result = await client.completions.create({
      model,
      prompt: reference.prompt,
      max_tokens: 196,
      temperature: 0,
    });
    expect(reference.prompt + result.choices[0].text).toBe(reference.text);
    expect(result.choices[0].finish_reason).toBe('length');
    expect(result.object).toBe('text_completion');
    expect(result.usage).toEqual({ prompt_tokens: 5, completion_tokens: 196, total_tokens: 201 });
  });

  it('streams the same text in chunks, then the usage', async () => {
    const [, reference] = golden.greedy;
    const stream = await client.completions.create({
      model,
      prompt: reference.prompt,
      max_tokens: 196,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const reasons: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      for (const choice of chunk.choices) {
        text += choice.text;
        reasons.push(choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(reference.prompt + text).toBe(reference.text);
    expect(chunks).toBeGreaterThan(50);
    expect(reasons.at(-1)).toBe('length');
    expect(reasons.slice(0, -1).every((r) => r === null)).toBe(true);
    expect(usage).toEqual({
      prompt_tokens: reference.prompt_tokens.length,
      completion_tokens: 196,
      total_tokens: 201,
    });
  });

  it('stops at a stop sequence with finish_reason stop, as pnpm generate does', async () => {
    const result = await client.completions.create({
      model,
      prompt: 'Lily and Tom',
      max_tokens: 30,
      temperature: 0,
      stop: ['park'],
    });
    const expected = await alone(served, golden.greedy[1].prompt_tokens, 30, ['park']);
    expect(result.choices[0].text).toBe(expected.text);
    expect(result.choices[0].text).toBe(' were playing in the ');
    expect(result.choices[0].finish_reason).toBe('stop');
    expect(result.usage?.completion_tokens).toBe(expected.tokens.length);
  });

  it('gives log-probabilities in the completions layout', async () => {
    const result = await client.completions.create({
      model,
      prompt: 'Once upon a time',
      max_tokens: 8,
      temperature: 0,
      logprobs: 2,
    });
    const { text, logprobs } = result.choices[0];
    expect(logprobs?.tokens?.join('')).toBe(text);
    expect(logprobs?.token_logprobs).toHaveLength(8);
    for (const [i, top] of (logprobs?.top_logprobs ?? []).entries()) {
      const entries = Object.entries(top);
      expect(entries).toHaveLength(2);
      expect(entries[0]).toEqual([logprobs?.tokens?.[i], logprobs?.token_logprobs?.[i]]);
      expect(entries[0][1]).toBeGreaterThanOrEqual(entries[1][1]);
    }
    expect(logprobs?.text_offset?.[1]).toBe(logprobs?.tokens?.[0].length);
  });
});

describe('chat completions with the openai client', () => {
  it('answers greedily with what TextGenerator gives for the chat prompt, whole and streamed', async () => {
    const messages = [{ role: 'user' as const, content: 'Tell me a story about a cat.' }];
    const ids = chatIds(messages[0].content);
    const expected = await alone(served, ids, 60);
    const result = await client.chat.completions.create({
      model,
      messages,
      max_completion_tokens: 60,
      temperature: 0,
    });
    expect(result.object).toBe('chat.completion');
    expect(result.choices[0].message).toMatchObject({ role: 'assistant', content: expected.text });
    expect(result.usage).toEqual({
      prompt_tokens: ids.length,
      completion_tokens: expected.tokens.length,
      total_tokens: ids.length + expected.tokens.length,
    });

    const stream = await client.chat.completions.create({
      model,
      messages,
      max_tokens: 60,
      temperature: 0,
      stream: true,
    });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta[] = [];
    let reason: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      deltas.push(chunk.choices[0].delta);
      reason = chunk.choices[0].finish_reason;
    }
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((d) => d.content ?? '').join('')).toBe(expected.text);
    expect(reason).toBe(result.choices[0].finish_reason);
  });

  it('gives each token log-probability and its top alternatives as the sampler computes them', async () => {
    const content = 'Once upon a time';
    const result = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content }],
      max_tokens: 6,
      temperature: 0,
      logprobs: true,
      top_logprobs: 3,
    });
    const generator = new TextGenerator(served.model, served.tokenizer);
    const events = generator.generate(chatIds(content), {
      sampling: { temperature: 0, topLogprobs: 3 },
      stop: { maxNewTokens: 6 },
    });
    const expected: { logprob: number; top: number[] }[] = [];
    for await (const event of events) {
      if (event.type === 'token')
        expected.push({ logprob: event.logprob ?? 0, top: (event.top ?? []).map((t) => t.logprob) });
    }
    const entries = result.choices[0].logprobs?.content ?? [];
    expect(entries).toHaveLength(6);
    expect(entries.map((e) => e.token).join('')).toBe(result.choices[0].message.content);
    entries.forEach((entry, i) => {
      expect(entry.logprob).toBeCloseTo(expected[i].logprob, 6);
      expect(entry.top_logprobs.map((t) => t.logprob)).toEqual(
        expected[i].top.map((lp) => expect.closeTo(lp, 6)),
      );
      expect(entry.top_logprobs[0].token).toBe(entry.token);
      expect(entry.bytes).toEqual([...new TextEncoder().encode(entry.token)]);
    });
  });

  it('maps temperature, top_p, seed, penalties and logit_bias onto the sampler', async () => {
    const content = 'Tom had a red ball.';
    const sampling: SamplerConfig = {
      temperature: 0.9,
      topP: 0.95,
      seed: 1234,
      frequencyPenalty: 0.5,
      presencePenalty: 0.3,
      logitBias: { 400: -100 },
    };
    const generator = new TextGenerator(served.model, served.tokenizer);
    let expected = '';
    for await (const event of generator.generate(chatIds(content), {
      sampling,
      stop: { maxNewTokens: 40 },
    })) {
      if (event.type === 'done') expected = event.stats.text;
    }
    const request = {
      model,
      messages: [{ role: 'user' as const, content }],
      max_tokens: 40,
      temperature: 0.9,
      top_p: 0.95,
      seed: 1234,
      frequency_penalty: 0.5,
      presence_penalty: 0.3,
      logit_bias: { 400: -100 },
    };
    const first = await client.chat.completions.create(request);
    expect(first.choices[0].message.content).toBe(expected);
    const forced = await client.completions.create({
      model,
      prompt: content,
      max_tokens: 5,
      temperature: 0,
      logit_bias: { 400: 100 },
    });
    expect(forced.choices[0].text).toBe(served.tokenizer.decode([400, 400, 400, 400, 400]));
  });
});

describe('the other routes', () => {
  it('lists the model, and answers health and metrics', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([model]);
    expect((await client.models.retrieve(model)).id).toBe(model);
    const base = client.baseURL.replace(/\/v1$/, '');
    const health = await fetch(`${base}/health`);
    expect(await health.json()).toEqual({ status: 'ok', model, running: 0, waiting: 0 });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^loom_requests_total\{route="\/v1\/completions",status="200"\} \d+$/m);
    expect(metrics).toMatch(/^loom_completion_tokens_total [1-9]\d*$/m);
    expect(metrics).toMatch(/^loom_time_to_first_token_seconds_count [1-9]\d*$/m);
    expect(metrics).toMatch(/^# TYPE loom_queue_depth gauge$/m);
  });
});
