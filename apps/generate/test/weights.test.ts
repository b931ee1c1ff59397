import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, serializeGguf, transformerFromTensors } from '@loom/models';
import { InferenceSession } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, root } from './run-cli';

const tokenizer = '../shared/data/models/tok512.bin';
const dir = mkdtempSync(join(tmpdir(), 'loom-generate-weights-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const gguf = join(dir, 'stories260K-Q8_0.gguf');
const PROMPT = 'Once upon a time';
const TOKENS = 40;

/** Below this top-2 logit margin the f32 and int8-activation products may pick differently. */
const NEAR_TIE = 0.05;

interface Generated {
  promptTokens: number[];
  tokens: number[];
  weights: { mode: string; layers: number; blocks: Record<string, number>; bytes: number };
}

async function generate(...flags: string[]): Promise<Generated> {
  const { status, stdout, stderr } = await cli(
    ...['--model', gguf, '--tokenizer', tokenizer, '--prompt', PROMPT, '--temperature', '0'],
    ...['--max-tokens', String(TOKENS), '--json', ...flags],
  );
  expect(stderr).toBe('');
  expect(status).toBe(0);
  return JSON.parse(stdout);
}

/** The f32 model's greedy ids after `prompt`, with the top-2 logit margin of each choice. */
async function greedyF32(prompt: readonly number[], count: number) {
  setBackend(new CpuBackend());
  const model = transformerFromTensors(loadModelFile(gguf), gguf);
  const session = new InferenceSession(model);
  const [ids, margins]: [number[], number[]] = [[], []];
  let logits = session.feed(prompt);
  for (let step = 0; step < count; step++) {
    const row = Array.from(await logits.data(), Number);
    logits.dispose();
    const best = row.indexOf(Math.max(...row));
    ids.push(best);
    margins.push(row[best] - Math.max(...row.filter((_, id) => id !== best)));
    logits = session.feed([best]);
  }
  logits.dispose();
  session.dispose();
  model.dispose();
  return { ids, margins };
}

describe('pnpm generate --weights', () => {
  /** The Q8_0 file's linear weights kept as blocks, and their bytes, read apart from the CLI. */
  let kept: { count: number; blockBytes: number; f32Bytes: number; widenedBytes: number };
  beforeAll(() => {
    const bin = loadModelFile(join(root, '../shared/data/models/stories260K.bin'));
    writeFileSync(gguf, serializeGguf(bin.config, bin.tensors, { weightType: 'Q8_0' }));
    const loaded = loadModelFile(gguf, { weights: 'quantized' });
    const quantized = loaded.quantized ?? [];
    // Blocks replace the f32 weights: a linear layer's, and the tied embedding's (its lookups and output projection).
    const replaced = new Set(quantized.map((q) => q.name));
    expect(replaced).toContain('tok_embeddings.weight');
    // The kept linears' float32 forms are not in `loaded`: the widened bytes are those of the f32 load.
    const widened = loadModelFile(gguf).tensors;
    expect(loaded.tensors.filter((t) => replaced.has(t.name))).toEqual([]);
    const f32 = (keep: (name: string) => boolean) =>
      widened.filter((t) => keep(t.name)).reduce((sum, t) => sum + t.data.byteLength, 0);
    kept = {
      count: quantized.length,
      blockBytes: quantized.reduce((sum, q) => sum + q.scales.byteLength + q.quants.byteLength, 0),
      f32Bytes: f32((name) => !replaced.has(name)),
      widenedBytes: f32(() => true),
    };
    expect(kept.count).toBeGreaterThan(20); // stories260K: 6 of the 7 linears of each of its 5 layers (w2 is 172 wide)
  });

  it('keeps the Q8_0 blocks by default: the layers read them, and the weights take the blocks’ bytes', async () => {
    const { weights } = await generate();
    expect(weights.mode).toBe('quantized');
    expect(weights.blocks).toEqual({ q8_0: kept.count });
    expect(weights.layers).toBeGreaterThan(kept.count);
    expect(weights.bytes).toBe(kept.f32Bytes + kept.blockBytes);
    expect(weights.bytes).toBeLessThan(kept.widenedBytes);
  });

  it('widens every weight with --weights f32: no layer reads blocks', async () => {
    const { weights } = await generate('--weights', 'f32');
    expect(weights).toEqual({ mode: 'f32', layers: weights.layers, blocks: {}, bytes: kept.widenedBytes });
  });

  it('generates greedily, with the blocks, the f32 model’s tokens up to its first near tie', async () => {
    const [quantized, widened] = [await generate(), await generate('--weights', 'f32')];
    const { ids, margins } = await greedyF32(widened.promptTokens, TOKENS);
    expect(widened.tokens).toEqual(ids);
    const tie = margins.findIndex((margin) => margin < NEAR_TIE);
    const decided = tie === -1 ? ids.length : tie;
    expect(decided).toBeGreaterThanOrEqual(16);
    expect(quantized.tokens.slice(0, decided)).toEqual(ids.slice(0, decided));
  });

  it('names the weights in the summary line on stderr', async () => {
    const { status, stderr } = await cli(
      ...['--model', gguf, '--tokenizer', tokenizer, '--prompt', PROMPT, '--max-tokens', '4'],
    );
    expect(status).toBe(0);
    expect(stderr).toMatch(
      new RegExp(
        `; weights quantized: ${kept.count} q8_0 of \\d+ linear layers read blocks, [\\d.]+ KiB\\n$`,
      ),
    );
  });

  it('refuses any other value, naming the flag and its values', async () => {
    for (const value of ['q8_0', 'F32', '']) {
      const { status, stderr } = await cli('--model', gguf, '--weights', value);
      expect(status).toBe(2);
      expect(stderr).toBe(
        `generate: --weights: expected quantized or f32, got ${JSON.stringify(value)}; see loom generate --help\n`,
      );
    }
    expect((await cli('--help')).stdout).toMatch(/--weights quantized\|f32 +quantized \(default\) keeps/);
  });
});
