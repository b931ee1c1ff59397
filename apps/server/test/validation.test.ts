import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedModel } from '../src/load';
import type { LoomServer } from '../src/server';
import { loadStories, startServer } from './helpers';

let served: ServedModel;
let server: LoomServer;
let base: string;
const model = 'stories260K.bin';
const messages = [{ role: 'user', content: 'Hi' }];

beforeAll(async () => {
  served = await loadStories();
  ({ server, baseURL: base } = await startServer(served, { maxBodyBytes: 4000 }));
});

afterAll(async () => {
  await server.close();
  served.model.dispose();
});

async function post(path: string, body: string | object, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** Expects an OpenAI error object with this status, code and param, whose message matches. */
async function expectError(
  reply: Promise<{ status: number; body: { error: Record<string, unknown> } }>,
  status: number,
  code: string,
  param: string | null,
  message: RegExp,
) {
  const { status: got, body } = await reply;
  expect({ status: got, code: body.error.code, param: body.error.param }).toEqual({ status, code, param });
  expect(body.error.message).toMatch(message);
  expect(typeof body.error.type).toBe('string');
}

const chat = (extra: object) => post('/v1/chat/completions', { model, messages, ...extra });
const completion = (extra: object) => post('/v1/completions', { model, prompt: 'Once', ...extra });

describe('bad requests get a 4xx and an OpenAI error object naming the problem', () => {
  it('malformed JSON and a body that is not an object', async () => {
    await expectError(
      post('/v1/chat/completions', '{"model": '),
      400,
      'invalid_json',
      null,
      /not valid JSON/,
    );
    await expectError(
      post('/v1/completions', '[1, 2]'),
      400,
      'invalid_json',
      null,
      /must be a JSON object, got an array/,
    );
  });

  it('a missing or unknown model', async () => {
    await expectError(
      post('/v1/chat/completions', { messages }),
      400,
      'missing_required_parameter',
      'model',
      /model is required/,
    );
    await expectError(
      chat({ model: 'gpt-4o' }),
      404,
      'model_not_found',
      'model',
      /"gpt-4o" does not exist here; this server has "stories260K.bin"/,
    );
  });

  it('wrong types', async () => {
    await expectError(
      chat({ temperature: 'hot' }),
      400,
      'invalid_type',
      'temperature',
      /temperature must be a number, got the string "hot"/,
    );
    await expectError(chat({ max_tokens: 1.5 }), 400, 'invalid_type', 'max_tokens', /must be an integer/);
    await expectError(chat({ stream: 'yes' }), 400, 'invalid_type', 'stream', /true or false/);
    await expectError(
      post('/v1/chat/completions', { model, messages: 'Hi' }),
      400,
      'invalid_type',
      'messages',
      /an array/,
    );
    await expectError(
      chat({ messages: [{ role: 'user', content: 7 }] }),
      400,
      'invalid_type',
      'messages[0].content',
      /got number 7/,
    );
    await expectError(
      completion({ prompt: { text: 'x' } }),
      400,
      'invalid_type',
      'prompt',
      /a string, or an array of token ids/,
    );
    await expectError(chat({ stop: 3 }), 400, 'invalid_type', 'stop', /a string or an array of strings/);
  });

  it('out-of-range values', async () => {
    await expectError(
      chat({ temperature: 3 }),
      400,
      'invalid_value',
      'temperature',
      /in \[0, 2\], got number 3/,
    );
    await expectError(chat({ top_p: 0 }), 400, 'invalid_value', 'top_p', /\(0, 1\]/);
    await expectError(
      chat({ max_completion_tokens: 0 }),
      400,
      'invalid_value',
      'max_completion_tokens',
      /integer in \[1,/,
    );
    await expectError(chat({ frequency_penalty: 5 }), 400, 'invalid_value', 'frequency_penalty', /\[-2, 2\]/);
    await expectError(chat({ presence_penalty: -3 }), 400, 'invalid_value', 'presence_penalty', /\[-2, 2\]/);
    await expectError(chat({ seed: -1 }), 400, 'invalid_value', 'seed', /integer in \[0,/);
    await expectError(
      chat({ logprobs: true, top_logprobs: 21 }),
      400,
      'invalid_value',
      'top_logprobs',
      /\[0, 20\]/,
    );
    await expectError(
      chat({ top_logprobs: 2 }),
      400,
      'invalid_value',
      'top_logprobs',
      /needs logprobs: true/,
    );
    await expectError(completion({ logprobs: 6 }), 400, 'invalid_value', 'logprobs', /\[0, 5\]/);
    await expectError(
      chat({ logit_bias: { 9999: 1 } }),
      400,
      'invalid_value',
      'logit_bias',
      /token ids in \[0, 512\)/,
    );
    await expectError(
      chat({ logit_bias: { 5: 200 } }),
      400,
      'invalid_value',
      'logit_bias.5',
      /\[-100, 100\]/,
    );
    await expectError(chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_value', 'stop', /at most 4/);
    await expectError(
      chat({ messages: [{ role: 'robot', content: 'x' }] }),
      400,
      'invalid_value',
      'messages[0].role',
      /one of system/,
    );
    await expectError(chat({ messages: [] }), 400, 'invalid_value', 'messages', /empty/);
    await expectError(
      completion({ prompt: [1, 600] }),
      400,
      'invalid_value',
      'prompt',
      /token ids in \[0, 512\)/,
    );
    await expectError(
      chat({ stream_options: { include_usage: true } }),
      400,
      'invalid_value',
      'stream_options',
      /only allowed with stream: true/,
    );
  });

  it('n > 1 and other unsupported settings are refused clearly', async () => {
    await expectError(chat({ n: 2 }), 400, 'unsupported_value', 'n', /n must be 1.*send 2 requests instead/);
    await expectError(completion({ best_of: 3 }), 400, 'unsupported_value', 'best_of', /best_of must be 1/);
    await expectError(completion({ echo: true }), 400, 'unsupported_value', 'echo', /not supported/);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'none', maxRetries: 0 });
    const refused = client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      n: 3,
    });
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'unsupported_value', param: 'n' });
  });

  it('a prompt longer than the context, or leaving no room for max_tokens', async () => {
    const ids = Array.from({ length: 600 }, () => 300);
    await expectError(
      completion({ prompt: ids }),
      400,
      'context_length_exceeded',
      'prompt',
      /maximum context length is 512 tokens, but you requested 600/,
    );
    await expectError(
      completion({ prompt: ids.slice(0, 500), max_tokens: 100 }),
      400,
      'context_length_exceeded',
      'prompt',
      /requested 600 tokens \(500 in the prompt, 100 in the completion\)/,
    );
  });

  it('a body over the size limit gets 413 and its connection closed', async () => {
    const reply = await post('/v1/completions', { model, prompt: 'x'.repeat(5000) });
    expect(reply.status).toBe(413);
    expect(reply.body.error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error' });
    expect(reply.body.error.message).toMatch(/limit of 4000 bytes/);
    expect(reply.headers.get('connection')).toBe('close');
    expect((await completion({ max_tokens: 2 })).status).toBe(200);
  });

  it('unknown routes and wrong methods', async () => {
    const missing = await fetch(`${base}/v1/embeddings`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('not_found');
    const wrong = await fetch(`${base}/v1/completions`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    const missingApi = await fetch(`${base}/v1/nope`);
    expect((await missingApi.json()).error.code).toBe('not_found');
    expect((await fetch(`${base}/a/b/c`)).status).toBe(404); // not an API path: a static file of the app
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^loom_requests_total\{route="other",status="404"\} 2$/m);
    expect(metrics).toMatch(/^loom_requests_total\{route="static",status="404"\} 1$/m);
    expect(metrics).not.toContain('/a/b/c');
  });

  it('sends no CORS headers unless --cors names an origin', async () => {
    const res = await fetch(`${base}/v1/models`, { headers: { Origin: 'http://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${base}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('access', () => {
  it('requires Authorization: Bearer KEY when an API key is set; /health stays open', async () => {
    const { server: locked, baseURL } = await startServer(served, { apiKey: 'sesame' });
    try {
      const none = await fetch(`${baseURL}/v1/models`);
      expect(none.status).toBe(401);
      expect((await none.json()).error).toMatchObject({
        code: 'invalid_api_key',
        type: 'authentication_error',
        param: null,
      });
      const wrong = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'open', maxRetries: 0 });
      await expect(wrong.models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
      const right = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sesame', maxRetries: 0 });
      expect((await right.models.list()).data[0].id).toBe(model);
      expect((await fetch(`${baseURL}/health`)).status).toBe(200);
      expect((await fetch(`${baseURL}/metrics`)).status).toBe(401);
    } finally {
      await locked.close();
    }
  });

  it('allows the --cors origin, with a preflight answer', async () => {
    const origin = 'http://localhost:5173';
    const { server: open, baseURL } = await startServer(served, { cors: origin });
    try {
      const res = await fetch(`${baseURL}/v1/models`, { headers: { Origin: origin } });
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      const preflight = await fetch(`${baseURL}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    } finally {
      await open.close();
    }
  });

  it('ends a request past its time limit with 504, whole or streamed', async () => {
    const { server: hasty, client } = await startServer(served, { timeoutMs: 1 });
    try {
      const whole = client.completions.create({ model, prompt: 'Once', max_tokens: 500, temperature: 0 });
      await expect(whole).rejects.toMatchObject({ status: 504, code: 'request_timeout' });
      // the limit may pass before the first token (a 504 answer) or after the stream began (an error event)
      const read = async () => {
        const stream = await client.completions.create({
          model,
          prompt: 'Once',
          max_tokens: 500,
          temperature: 0,
          stream: true,
        });
        for await (const _ of stream) {
          // read until the error event
        }
      };
      await expect(read()).rejects.toThrow(/time limit of 0.001 s/);
    } finally {
      await hasty.close();
    }
  });
});
