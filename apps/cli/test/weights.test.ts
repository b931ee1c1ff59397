import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/run';
import { loom } from './loom-io';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));
const stories = join(models, 'stories260K.bin');
const tok512 = join(models, 'tok512.bin');
const story = fileURLToPath(new URL('fixtures/story.txt', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'loom-weights-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q8 = join(dir, 'stories-q8_0.gguf');

interface Scored {
  perplexity: number;
  scored: number;
  weights: { mode: string; layers: number; blocks: Record<string, number>; bytes: number };
}

async function perplexity(...argv: string[]): Promise<Scored> {
  const result = await loom(dir, 'perplexity', '-m', q8, story, ...argv, '--json');
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout);
}

/** `loom chat ARGV` fed `input` on a pipe (it ends there); what it printed, and its exit status. */
async function chat(input: string, ...argv: string[]) {
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
  const text = { stdout: '', stderr: '' };
  stdout.on('data', (chunk: Buffer) => {
    text.stdout += chunk.toString('utf8');
  });
  stderr.on('data', (chunk: Buffer) => {
    text.stderr += chunk.toString('utf8');
  });
  stdin.end(input);
  const io = { stdin, stdout, stderr, env: { INIT_CWD: dir }, signal: new AbortController().signal };
  const status = await run(['chat', ...argv], io);
  await new Promise((resolve) => setImmediate(resolve));
  return { status, ...text };
}

describe('--weights on a Q8_0 GGUF (loom quantize of stories260K)', () => {
  beforeAll(async () => {
    const quantized = await loom(dir, 'quantize', '--type', 'q8_0', stories, q8, '--tokenizer', tok512);
    expect(quantized.status).toBe(0);
  });

  it('perplexity scores with the blocks by default, and says so; --weights f32 widens them', async () => {
    const [kept, widened] = [await perplexity(), await perplexity('--weights', 'f32')];
    expect(kept.weights.mode).toBe('quantized');
    expect(kept.weights.blocks.q8_0).toBeGreaterThan(20); // 6 of the 7 linears of each of 5 layers
    expect(kept.weights.bytes).toBeLessThan(widened.weights.bytes);
    expect(widened.weights).toMatchObject({ mode: 'f32', blocks: {} });
    expect(kept.scored).toBe(widened.scored);
    // Other kernels ran (int8 activations on the CPU), costing the score little.
    expect(kept.perplexity).not.toBe(widened.perplexity);
    expect(Math.abs(kept.perplexity / widened.perplexity - 1)).toBeLessThan(0.005);
    const text = await loom(dir, 'perplexity', '-m', q8, story);
    expect(text.stdout).toMatch(
      /; weights quantized: \d+ q8_0 of \d+ linear layers read blocks, [\d.]+ KiB\)\n$/,
    );
  });

  it('chat names the weights it holds, blocks by default', async () => {
    const kept = await chat('/exit\n', '-m', q8);
    expect(kept.status).toBe(0);
    expect(kept.stdout).toMatch(
      /^loom chat: .*stories-q8_0\.gguf, plain template, weights quantized: \d+ q8_0 of/,
    );
    const widened = await chat('/exit\n', '-m', q8, '--weights', 'f32');
    expect(widened.stdout).toMatch(/, weights f32: no linear layer reads blocks, /);
  });

  it.each([
    ['perplexity', ['-m', q8, story]],
    ['chat', ['-m', q8]],
  ])('%s refuses a bad --weights, naming the flag and its values', async (command, argv) => {
    const result = await loom(dir, command, ...argv, '--weights', 'q8_0');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      `${command}: --weights: expected quantized or f32, got "q8_0"; see loom ${command} --help\n`,
    );
  });
});
