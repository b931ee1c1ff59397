import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../src/run';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));

describe('loom serve', () => {
  it('serves the OpenAI API until the signal, then exits 0', async () => {
    const stop = new AbortController();
    const stderr = new PassThrough();
    let log = '';
    const listening = new Promise<string>((resolve) => {
      stderr.on('data', (chunk: Buffer) => {
        log += chunk.toString('utf8');
        const origin = /on (http:\/\/[^\s/]+)\/v1/.exec(log);
        if (origin) resolve(origin[1]);
      });
    });
    const status = run(
      ['serve', '-m', `${models}stories260K.bin`, '--tokenizer', `${models}tok512.bin`, '--port', '0'],
      { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {}, signal: stop.signal },
    );
    const origin = await Promise.race([
      listening,
      status.then((code) => Promise.reject(new Error(`loom serve exited ${code} before listening: ${log}`))),
    ]);
    const listed = (await (await fetch(`${origin}/v1/models`)).json()) as { data: { id: string }[] };
    const reply = await fetch(`${origin}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: listed.data[0].id,
        prompt: 'Once upon a time',
        max_tokens: 5,
        temperature: 0,
      }),
    });
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as {
      choices: { text: string }[];
      usage: { completion_tokens: number };
    };
    expect(body.usage.completion_tokens).toBe(5);
    expect(body.choices[0].text.length).toBeGreaterThan(0);
    stop.abort();
    expect(await status).toBe(0);
  });
});
