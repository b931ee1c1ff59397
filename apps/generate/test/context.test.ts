import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expectedTensors,
  type ModelConfig,
  toHfConfig,
  toHfTensors,
  writeSafetensorsFile,
} from '@loom/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './run-cli';

const tokenizer = '../shared/data/models/tok512.bin';

/** A small llama for tok512 whose config.json claims 100 million positions. */
const config: ModelConfig = {
  preset: 'llama',
  vocabSize: 512,
  dim: 64,
  numLayers: 8,
  numHeads: 4,
  numKvHeads: 4,
  hiddenDim: 128,
  maxSeqLen: 1e8,
  normEps: 1e-5,
  ropeTheta: 10000,
  tiedEmbeddings: false,
  bias: false,
};
/** Its float32 KV cache for all 1e8 positions: 8 layers × keys and values × 4 heads × 16 × 4 bytes each. */
const wholeCache = 1e8 * 8 * 2 * 4 * 16 * 4;

describe('the KV cache pnpm generate allocates', () => {
  let dir: string;
  let model: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'loom-generate-'));
    model = join(dir, 'model.safetensors');
    const tensors = expectedTensors(config).map(({ name, shape }) => ({
      name,
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => 0.05 * Math.sin(i)),
    }));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(toHfConfig(config)));
    writeSafetensorsFile(model, toHfTensors(config, tensors));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is sized for the prompt and --max-tokens, so a 1e8-position config generates', async () => {
    const { status, stdout, stderr } = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Once upon a time'],
      ...['--temperature', '0', '--max-tokens', '10', '--json'],
    );
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(JSON.parse(stdout).tokens.length).toBeGreaterThan(0);
  });

  it('is refused when it would not fit, naming the file, the key and the bytes', async () => {
    const all = await cli('--model', model, '--tokenizer', tokenizer, '--max-tokens', '100000000');
    expect(all.status).toBe(1);
    expect(all.stderr).toContain(
      `generate: ${join(dir, 'config.json')}: max_position_embeddings is 100000000, and the prompt (1 token) plus ` +
        `--max-tokens 100000000 asks for all of it: the KV cache of 100000000 positions takes ${wholeCache} bytes`,
    );
    expect(all.stderr).toMatch(
      /\(totalBytes\), this machine's memory; pass a smaller --max-tokens or --context\n$/,
    );
    const flag = await cli('--model', model, '--tokenizer', tokenizer, '--context', '100000000');
    expect(flag.status).toBe(1);
    expect(flag.stderr).toContain(
      `generate: ${model}: --context 100000000: the KV cache of 100000000 positions takes ${wholeCache} bytes`,
    );
  });

  it('takes --context within the model’s maximum, as a usage error otherwise', async () => {
    const cases: [string, RegExp][] = [
      [
        '100000001',
        /--context: expected at most 100000000, the model's max_position_embeddings in .*config\.json, got 100000001/,
      ],
      ['0', /--context: expected a positive integer, got "0"/],
      ['many', /--context: expected an integer, got "many"/],
    ];
    for (const [value, message] of cases) {
      const { status, stderr } = await cli('--model', model, '--tokenizer', tokenizer, '--context', value);
      expect(status).toBe(2);
      expect(stderr).toMatch(message);
    }
    const short = await cli(
      '--model',
      model,
      '--tokenizer',
      tokenizer,
      '--prompt',
      'Once upon a time',
      '--context',
      '3',
    );
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/the prompt has 5 tokens but the context holds 3 positions/);
    const fits = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Once upon a time', '--context', '8'],
      ...['--temperature', '0', '--json', '--no-context-shift'],
    );
    expect(fits.status).toBe(0);
    expect(JSON.parse(fits.stdout)).toMatchObject({ stopReason: 'context-full', contextShifts: 0 });
    expect(JSON.parse(fits.stdout).tokens.length).toBe(4); // 5 prompt tokens, 8 positions: 4 new tokens
  });

  it('slides a full context by default, counting the shifts', async () => {
    const { status, stdout } = await cli(
      ...['-m', model, '--tokenizer', tokenizer, '-p', 'Once upon a time', '-c', '8', '-n', '24'],
      ...['--temperature', '0', '--json'],
    );
    expect(status).toBe(0);
    // 8 positions, BOS kept: every 4 tokens 9 do not fit, and 4 of the 8 after BOS go; 24 tokens, 5 shifts.
    expect(JSON.parse(stdout)).toMatchObject({ stopReason: 'max-tokens', contextShifts: 5 });
    expect(JSON.parse(stdout).tokens.length).toBe(24);
  });
});
