import { join } from 'node:path';
import { parseArgs, type ServeCommand } from '@loom/server/args';
import { loadServedModel, type ServedModel } from '@loom/server/load';
import { LoomServer } from '@loom/server/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiBase,
  type ChatStreamEvent,
  type Endpoint,
  listModels,
  ServerError,
  streamChat,
} from '../src/server/openai-api';

const models = join(import.meta.dirname, '../../../../shared/data/models');
const KEY = 'test-key';
let served: ServedModel;
let server: LoomServer;
let endpoint: Endpoint;

beforeAll(async () => {
  const args = ['--model', join(models, 'stories260K.bin'), '--tokenizer', join(models, 'tok512.bin')];
  served = await loadServedModel(parseArgs(args, {}) as ServeCommand, {});
  server = new LoomServer(served, { apiKey: KEY });
  const { port } = await server.listen(0, '127.0.0.1');
  endpoint = { base: `http://127.0.0.1:${port}/v1`, apiKey: KEY };
});

afterAll(async () => {
  await server.close();
  served.model.dispose();
});

const messages = [{ role: 'user', content: 'Once upon a time' }] as const;
const greedy = { temperature: 0, max_tokens: 40 };

async function collect(events: AsyncGenerator<ChatStreamEvent, void>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The error a promise rejects with. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('apiBase', () => {
  it('adds /v1 unless the URL ends in it, and names a bad URL', () => {
    expect(apiBase('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(apiBase(' http://127.0.0.1:8080/v1/ ')).toBe('http://127.0.0.1:8080/v1');
    expect(apiBase('https://example.com/openai/v1')).toBe('https://example.com/openai/v1');
    expect(() => apiBase('ws://127.0.0.1:8080')).toThrow(/must start with http:\/\/ or https:\/\//);
    expect(() => apiBase('127.0.0.1:8080')).toThrow(/is not a URL; give one like http:/);
    expect(() => apiBase('not a url')).toThrow('Server URL: "not a url" is not a URL');
  });
});

describe('the OpenAI API client of the page, against pnpm serve', () => {
  it('lists the models', async () => {
    expect(await listModels(endpoint)).toEqual(['stories260K.bin']);
  });

  it('streams the same text as the whole answer, then the finish reason and usage', async () => {
    const request = { model: 'stories260K.bin', messages, parameters: greedy };
    const events = await collect(streamChat(endpoint, request, new AbortController().signal));
    const whole = await fetch(`${endpoint.base}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'stories260K.bin', messages, ...greedy }),
    }).then((res) => res.json());
    const texts = events.flatMap((event) => (event.type === 'text' ? [event.text] : []));
    expect(texts.length).toBeGreaterThan(10);
    expect(texts.join('')).toBe(whole.choices[0].message.content);
    expect(events.at(-1)).toEqual({
      type: 'end',
      finishReason: whole.choices[0].finish_reason,
      usage: { ...whole.usage },
    });
  });

  it("throws the server's error objects: a wrong key, a bad parameter", async () => {
    const wrong = await failure(listModels({ ...endpoint, apiKey: 'nope' }));
    expect(wrong).toBeInstanceOf(ServerError);
    expect((wrong as ServerError).status).toBe(401);
    expect((wrong as ServerError).message).toMatch(
      /^Server error 401 \(invalid_api_key\): the API key is wrong.* enter the API key/,
    );
    const request = { model: 'stories260K.bin', messages, parameters: { temperature: 5 } };
    const bad = await failure(collect(streamChat(endpoint, request, new AbortController().signal)));
    expect((bad as ServerError).message).toBe(
      'Server error 400 (invalid_value): temperature must be a number in [0, 2], got number 5',
    );
  });

  it('names a server it cannot reach', async () => {
    const gone = await failure(listModels({ base: 'http://127.0.0.1:9/v1', apiKey: '' }));
    expect((gone as ServerError).message).toMatch(/^Could not reach http:\/\/127.0.0.1:9\/v1\/models \(/);
  });

  it('aborting ends the stream at once, and the server drops the sequence', async () => {
    const controller = new AbortController();
    const request = { model: 'stories260K.bin', messages, parameters: { temperature: 0.8, max_tokens: 400 } };
    const events = streamChat(endpoint, request, controller.signal);
    let texts = 0;
    const ended = failure(
      (async () => {
        for await (const event of events) {
          if (event.type === 'text' && ++texts === 5) controller.abort();
        }
      })(),
    );
    expect(((await ended) as Error).name).toBe('AbortError');
    expect(texts).toBe(5);
    await expect.poll(() => server.batcher.running, { timeout: 10_000 }).toBe(0);
  });
});
