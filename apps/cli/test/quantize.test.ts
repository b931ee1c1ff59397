import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend } from '@loom/backend-cpu';
import { loadModelFile, parseModel, serializeGguf, transformerFromTensors } from '@loom/models';
import { InferenceSession } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { loadTokenizer } from '@loom/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loom } from './loom-io';
import { writeKQuantLlama } from './random-llama';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));
const stories = join(models, 'stories260K.bin');
const tok512 = join(models, 'tok512.bin');
const dir = mkdtempSync(join(tmpdir(), 'loom-quantize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cpu = new CpuBackend();
const tokenizer = loadTokenizer(readFileSync(tok512), 'tok512.bin');

/** llama.cpp's greedy tokens on Loom-written K-quant GGUF files (fixtures/k-quants-peer.ts regenerates them). */
const peer: {
  prompt: string;
  tokens: number;
  runs: Record<string, { prompt_ids: number[]; ids: number[] }>;
} = JSON.parse(readFileSync(new URL('fixtures/k-quants-peer.json', import.meta.url), 'utf8'));

/**
 * Below this top-2 logit margin, Loom and llama.cpp may pick differently: llama.cpp multiplies Q4_K / Q6_K blocks by
 * activations it rounds to 8 bits (Q8_K), which moves this model's logits by hundredths.
 */
const NEAR_TIE = 0.05;

/** Loom's greedy ids after the prompt ids, with the top-2 logit margin of each choice. */
async function greedy(path: string, prompt: readonly number[], count: number) {
  setBackend(cpu);
  const model = transformerFromTensors(loadModelFile(path), path);
  const session = new InferenceSession(model);
  const ids: number[] = [];
  const margins: number[] = [];
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

/**
 * Loom's tokens equal llama.cpp's up to its first near tie (each of them decided by a clear margin from the same
 * history), and that comes late enough for the check to bite; the prompt encodes to llama.cpp's ids.
 */
async function expectPeerTokens(path: string, run: { prompt_ids: number[]; ids: number[] }) {
  expect(tokenizer.encode(peer.prompt, { bos: true })).toEqual(run.prompt_ids);
  const { ids, margins } = await greedy(path, run.prompt_ids, run.ids.length);
  const tie = margins.findIndex((margin) => margin < NEAR_TIE);
  const decided = tie === -1 ? ids.length : tie;
  expect(decided).toBeGreaterThanOrEqual(16);
  expect(ids.slice(0, decided)).toEqual(run.ids.slice(0, decided));
}

describe('loom quantize', () => {
  const bin = join(dir, 'rand.bin');
  beforeAll(() => writeKQuantLlama(bin));

  it.each([
    ['q4_k', ['--type', 'q4_k'], /: 15 Q4_K, 5 F32, 1 Q6_K\n$/], // output.weight in Q6_K, as llama-quantize
    ['q4_k-pure', ['--type', 'q4_k', '--pure'], /: 16 Q4_K, 5 F32\n$/],
    ['q6_k', ['--type', 'q6_k'], /: 16 Q6_K, 5 F32\n$/],
  ])(
    'writes %s GGUF on which Loom generates the greedy tokens llama.cpp generates',
    async (name, flags, summary) => {
      const out = join(dir, `rand-${name}.gguf`);
      const result = await loom(dir, 'quantize', bin, out, '--tokenizer', tok512, ...flags);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(summary); // 2 layers × 7 matrices, embeddings, output; 5 norms
      await expectPeerTokens(out, peer.runs[name]);
    },
  );

  it('keeps stories260K matrices it cannot block in their fallback type or F32, and says so', async () => {
    const out = join(dir, 'stories-q4_k.gguf');
    const result = await loom(dir, 'quantize', '--type', 'q4_k', stories, out, '--tokenizer', tok512);
    expect(result.status).toBe(0);
    // dim 64: Q4_0; w2 rows of 172 (not a multiple of 32): F32, with the 11 norms;
    // the tied embeddings: Q6_K → Q8_0; the Q4_0 matrices calibrated on the model's own text (the default)
    expect(result.stdout).toMatch(
      /: 30 Q4_0, 16 F32, 1 Q8_0; Q4_0 calibrated on 2048 tokens of text the model wrote\n$/,
    );
    expect(result.stderr).toMatch(/31 matrices have rows that are not whole Q4_K blocks of 256/);
    const quantized = loadModelFile(out);
    const original = loadModelFile(stories);
    const w2 = (m: typeof original) =>
      m.tensors.find((t) => t.name === 'layers.0.feed_forward.w2.weight')?.data;
    expect(w2(quantized)).toEqual(w2(original));
    expect(quantized.tokenizerJson).toBeDefined();
  });

  it.each([
    [['a.bin', 'b.gguf'], /--type: required/],
    [['--type', 'q5_k', 'a.bin', 'b.gguf'], /--type: expected q8_0, q4_0, q4_k or q6_k, got "q5_k"/],
    [['--type', 'q8_0', 'a.bin', 'b.bin'], /OUT: "b.bin" must end in .gguf/],
    [['--type', 'q8_0', 'a.bin'], /expected IN and OUT.gguf/],
    [
      ['--type', 'q4_0', '--calibration', '', 'a.bin', 'b.gguf'],
      /--calibration: expected auto, none or a text file/,
    ],
  ])('refuses %j with a usage error', async (argv, message) => {
    const result = await loom(dir, 'quantize', ...argv);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('fails with status 1 naming a missing input', async () => {
    const result = await loom(dir, 'quantize', '--type', 'q8_0', 'missing.bin', 'out.gguf');
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^quantize: .*missing\.bin/);
  });

  describe('--calibration', () => {
    const wq = 'layers.0.attention.wq.weight';
    const blocks = (path: string) => {
      const tensor = loadModelFile(path, { weights: 'quantized' }).quantized?.find((t) => t.name === wq);
      if (tensor === undefined) throw new Error(`${path} has no quantized ${wq}`);
      return tensor;
    };
    const run = async (name: string, ...flags: string[]) => {
      const out = join(dir, `stories-q4_0-${name}.gguf`);
      const result = await loom(
        dir,
        'quantize',
        '--type',
        'q4_0',
        stories,
        out,
        '--tokenizer',
        tok512,
        ...flags,
      );
      return { ...result, out };
    };

    it('none rounds as llama.cpp (the reference quantizer, byte for byte); auto and a text file round otherwise', async () => {
      const none = await run('none', '--calibration', 'none');
      expect(none.status).toBe(0);
      expect(none.stdout).toMatch(/: 30 Q4_0, 16 F32, 1 Q8_0\n$/);
      const reference = loadModelFile(none.out, { weights: 'quantized' });
      const stored = reference.quantized?.find((t) => t.name === wq);
      const expected = parseModel(
        serializeGguf(reference.config, loadModelFile(stories).tensors, { weightType: 'Q4_0' }),
        undefined,
        'reference.gguf',
        { weights: 'quantized' },
      ).quantized?.find((t) => t.name === wq);
      expect(stored).toEqual(expected);

      const text = join(dir, 'calibration.txt');
      writeFileSync(
        text,
        'Lily and Ben went to the park. They saw a big red ball and played all day. '.repeat(20),
      );
      const file = await run('file', '--calibration', text);
      expect(file.status).toBe(0);
      expect(file.stdout).toMatch(/; Q4_0 calibrated on \d+ tokens of .*calibration\.txt\n$/);
      const auto = await run('auto');
      expect(auto.stdout).toMatch(/; Q4_0 calibrated on 2048 tokens of text the model wrote\n$/);
      expect(blocks(auto.out).scales).not.toEqual(stored?.scales);
      expect(blocks(file.out).scales).not.toEqual(blocks(auto.out).scales);
      // seeded: the same file again
      expect(readFileSync((await run('auto-again')).out)).toEqual(readFileSync(auto.out));
    });

    it('refuses a calibration file it cannot read, naming it', async () => {
      const missing = await run('missing', '--calibration', join(dir, 'missing.txt'));
      expect(missing.status).toBe(1);
      expect(missing.stderr).toMatch(/--calibration .*missing\.txt.*ENOENT/);
      const short = join(dir, 'short.txt');
      writeFileSync(short, '');
      const empty = await run('empty', '--calibration', short);
      expect(empty.status).toBe(1);
      expect(empty.stderr).toMatch(
        /--calibration .*short\.txt: the text is 1 token\(s\); give at least a sentence/,
      );
    });
  });
});
