import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModelFile } from '@loom/models';
import { afterAll, describe, expect, it } from 'vitest';
import { loom } from './loom-io';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));
const model = join(models, 'stories260K.bin');
const tok512 = join(models, 'tok512.bin');
const dir = mkdtempSync(join(tmpdir(), 'loom-convert-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The greedy tokens of `loom generate` on a model (its tokenizer found beside it or inside it). */
async function greedy(path: string, ...flags: string[]): Promise<number[]> {
  const result = await loom(
    dir,
    'generate',
    '-m',
    path,
    '-p',
    'Once upon a time',
    '-n',
    '60',
    '--temperature',
    '0',
    '--json',
    ...flags,
  );
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout).tokens;
}

async function convert(...argv: string[]): Promise<void> {
  const result = await loom(dir, 'convert', ...argv);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(result.stdout).toMatch(/ -> (llama2c|loom|hf|gguf): wrote /);
}

describe('loom convert', () => {
  it('round trips stories260K llama2c -> Hugging Face -> llama2c with the same weights, tokenizer and output', async () => {
    const reference = await greedy(model, '--tokenizer', tok512);
    await convert(model, 'hf', '--to', 'hf', '--tokenizer', tok512);
    expect(JSON.parse(readFileSync(join(dir, 'hf/config.json'), 'utf8'))).toMatchObject({
      architectures: ['LlamaForCausalLM'],
    });
    expect(await greedy('hf')).toEqual(reference); // the tokenizer.bin came along
    await convert('hf', 'back/stories260K.bin');
    expect(readFileSync(join(dir, 'back/tokenizer.bin')).equals(readFileSync(tok512))).toBe(true);
    const original = readFileSync(model);
    const back = readFileSync(join(dir, 'back/stories260K.bin'));
    expect(back.length).toBe(original.length);
    // Every weight byte is the same; only the legacy RoPE tables at the end, which run.c skips, are recomputed.
    const { config, tensors } = loadModelFile(model);
    const ropeBytes = config.maxSeqLen * (config.dim / config.numHeads) * 4; // cos and sin, half a head each
    expect(back.subarray(0, -ropeBytes).equals(original.subarray(0, -ropeBytes))).toBe(true);
    const reread = loadModelFile(join(dir, 'back/stories260K.bin')).tensors;
    expect(reread.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))).toEqual(
      tensors.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)),
    );
    expect(await greedy('back/stories260K.bin')).toEqual(reference);
  });

  it('goes llama2c -> Loom checkpoint -> Hugging Face, and llama2c -> GGUF, with the same greedy output', async () => {
    const reference = await greedy(model, '--tokenizer', tok512);
    await convert(model, 'checkpoint', '--to=loom', `--tokenizer=${tok512}`);
    expect(await greedy('checkpoint')).toEqual(reference); // its own tokenizer.json
    await convert('checkpoint', 'hf-from-loom', '--to', 'hf');
    expect(await greedy('hf-from-loom')).toEqual(reference);
    await convert(model, 'stories260K.gguf', '--tokenizer', tok512);
    expect(await greedy('stories260K.gguf')).toEqual(reference); // the vocabulary inside the file
    await convert(model, 'q8.gguf', '--tokenizer', tok512, '--weight-type', 'Q8_0');
    expect((await greedy('q8.gguf')).length).toBe(60);
    for (const type of ['F16', 'BF16'] as const) {
      const file = `${type.toLowerCase()}.gguf`;
      await convert(model, file, '--tokenizer', tok512, '--weight-type', type);
      const halves = loadModelFile(join(dir, file), { weights: 'quantized' }).halves ?? [];
      expect(halves.map((h) => h.type)).toContain(type.toLowerCase());
      // The products that read the 16-bit values as stored, and the float32 ones of the same values widened at load.
      expect(await greedy(file)).toEqual(await greedy(file, '--weights', 'f32'));
    }
  });

  it('refuses bad command lines with exit status 2 and failures with 1, on one line', async () => {
    const cases: [string[], number, RegExp][] = [
      [[model, 'out'], 2, /--to: required, as "out" ends in neither \.bin nor \.gguf; give loom or hf/],
      [[model], 2, /expected IN and OUT/],
      [[model, 'a', 'b'], 2, /unexpected argument "b"/],
      [[model, 'x.bin', '--to', 'onnx'], 2, /--to: expected llama2c, loom, hf or gguf, got "onnx"/],
      [[model, 'x.bin', '--weight-type', 'Q8_0'], 2, /--weight-type: applies to --to gguf only/],
      [[model, model], 2, /OUT is IN/],
      [['nope.bin', 'x.bin'], 1, /IN nope\.bin \(.*\): no such file or directory/],
    ];
    for (const [argv, status, message] of cases) {
      const result = await loom(dir, 'convert', ...argv);
      expect(result.status, argv.join(' ')).toBe(status);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    writeFileSync(join(dir, 'tokenizer.bin'), 'another tokenizer');
    const clash = await loom(dir, 'convert', model, 'model.bin', '--tokenizer', tok512);
    expect(clash.status).toBe(1);
    expect(clash.stderr).toMatch(/tokenizer\.bin: exists and holds another tokenizer; remove it/);
  });
});
