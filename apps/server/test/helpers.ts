import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TextGenerator } from '@loom/runtime';
import OpenAI from 'openai';
import { parseArgs, type ServeCommand } from '../src/args';
import { loadServedModel, type ServedModel } from '../src/load';
import { LoomServer, type ServerOptions } from '../src/server';

/** A file of the shared data beside the repository. */
export const shared = (path: string) =>
  fileURLToPath(new URL(`../../../../shared/data/${path}`, import.meta.url));

export const golden: {
  greedy: { prompt: string; text: string; sequence: number[]; prompt_tokens: number[] }[];
} = JSON.parse(readFileSync(shared('golden/stories260K.json'), 'utf8'));

/** stories260K with its tokenizer on the CPU backend, loaded as `pnpm serve` loads it. */
export async function loadStories(): Promise<ServedModel> {
  const args = ['--model', shared('models/stories260K.bin'), '--tokenizer', shared('models/tok512.bin')];
  return loadServedModel(parseArgs(args, {}) as ServeCommand, {});
}

/** A server on a free loopback port and an official OpenAI client for it (no retries, so every status shows). */
export async function startServer(
  served: ServedModel,
  options: ServerOptions = {},
): Promise<{ server: LoomServer; baseURL: string; client: OpenAI }> {
  const server = new LoomServer(served, options);
  const { port } = await server.listen(0, '127.0.0.1');
  const baseURL = `http://127.0.0.1:${port}`;
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: options.apiKey ?? 'none', maxRetries: 0 });
  return { server, baseURL, client };
}

/** What `TextGenerator` (the engine of `pnpm generate`) gives alone for these prompt ids, greedily. */
export async function alone(
  served: ServedModel,
  prompt: readonly number[],
  maxNewTokens: number,
  stopStrings: string[] = [],
): Promise<{ text: string; tokens: readonly number[] }> {
  const generator = new TextGenerator(served.model, served.tokenizer);
  for await (const event of generator.generate(prompt, {
    sampling: { temperature: 0 },
    stop: { maxNewTokens, stopStrings },
  })) {
    if (event.type === 'done') return { text: event.stats.text, tokens: event.stats.tokens };
  }
  throw new Error('alone: the generation ended without a done event');
}
