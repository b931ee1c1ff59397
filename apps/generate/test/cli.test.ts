import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { webgpuForTests } from '@loom/webgpu-node';
import { describe, expect, it } from 'vitest';
import { cli } from './run-cli';

const gpu = await webgpuForTests();

const model = '../shared/data/models/stories260K.bin';
const tokenizer = '../shared/data/models/tok512.bin';
const golden: { greedy: { text: string; sequence: number[]; prompt_tokens: number[] }[] } = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../../shared/data/golden/stories260K.json', import.meta.url)),
    'utf8',
  ),
);

describe('pnpm generate', () => {
  it('streams the reference story greedily, prompt first, with a summary on stderr', async () => {
    const { status, stdout, stderr } = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Once upon a time'],
      ...['--temperature', '0', '--max-tokens', '196'],
    );
    expect(status).toBe(0);
    expect(stdout).toBe(`${golden.greedy[0].text}\n`);
    expect(stderr).toMatch(
      /^196 tokens, stop: max-tokens; prefill 5 tokens at [\d.]+ tok\/s, decode [\d.]+ tok\/s/,
    );
  });

  it('prints one JSON object with tokens, text, stop reason and timings', async () => {
    const { status, stdout } = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Lily and Tom', '--json'],
      ...['--temperature', '0', '--max-tokens', '30', '--stop', 'park'],
    );
    expect(status).toBe(0);
    const result = JSON.parse(stdout);
    const [, reference] = golden.greedy;
    expect(result.promptTokens).toEqual(reference.prompt_tokens);
    expect(result.tokens).toEqual(reference.sequence.slice(5, 5 + result.tokens.length));
    expect(result).toMatchObject({
      text: ' were playing in the ',
      stopReason: 'stop-string',
      backend: 'cpu',
    });
    expect(Object.keys(result.timings)).toEqual(
      expect.arrayContaining(['prefillTokensPerSecond', 'decodeTokensPerSecond', 'timeToFirstTokenMs']),
    );
  });

  it.skipIf(!gpu)('gives the same greedy tokens on WebGPU', async () => {
    const { status, stdout } = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Once upon a time'],
      ...['--temperature', '0', '--max-tokens', '60', '--backend', 'webgpu', '--json'],
    );
    expect(status).toBe(0);
    expect(JSON.parse(stdout).tokens).toEqual(golden.greedy[0].sequence.slice(5, 65));
  });

  it('samples the same tokens for the same seed', async () => {
    const run = () =>
      cli('--model', model, '--tokenizer', tokenizer, '--seed', '5', '--max-tokens', '20', '--json');
    const [a, b] = [JSON.parse((await run()).stdout), JSON.parse((await run()).stdout)];
    expect(a.seed).toBe(5);
    expect(a.tokens).toEqual(b.tokens);
  });

  it('names missing files, a mismatched tokenizer and a prompt longer than the context', async () => {
    const cases: [string[], RegExp][] = [
      [['--model', 'nope.bin'], /--model nope\.bin \(.*nope\.bin\): no such file or directory/],
      [
        ['--model', model, '--tokenizer', 'nope.bin'],
        /--tokenizer nope\.bin \(.*\): cannot read it \(ENOENT\)/,
      ],
      [
        ['--model', model],
        /--tokenizer: not given, and there is no tokenizer\.json or tokenizer\.bin beside/,
      ],
      [
        ['--model', model, '--tokenizer', '../shared/data/gpt2/r50k_base.tiktoken'],
        /the tokenizer has 50257 tokens but the model's vocabulary has 512/,
      ],
      [
        ['--model', model, '--tokenizer', tokenizer, '--prompt', 'a cat sat. '.repeat(200)],
        /the prompt has \d+ tokens but the context holds 512 positions/,
      ],
    ];
    for (const [argv, message] of cases) {
      const { status, stderr } = await cli(...argv);
      expect(status).toBe(1);
      expect(stderr).toMatch(message);
    }
  });

  it('reads short aliases and --flag=value as the long flags', async () => {
    const long = await cli(
      ...['--model', model, '--tokenizer', tokenizer, '--prompt', 'Lily and Tom', '--max-tokens', '12'],
      ...['--seed', '7', '--threads', '1', '--json'],
    );
    const short = await cli(
      ...[
        '-m',
        model,
        `--tokenizer=${tokenizer}`,
        '-p',
        'Lily and Tom',
        '-n12',
        '-s',
        '7',
        '-t',
        '1',
        '--json',
      ],
    );
    expect(short.status).toBe(0);
    expect(JSON.parse(short.stdout).tokens).toEqual(JSON.parse(long.stdout).tokens);
    expect(JSON.parse(short.stdout).tokens).toHaveLength(12);
  });

  it('explains bad flags on one line with exit status 2', async () => {
    for (const [argv, message] of [
      [['--prompt', 'x'], /--model: required/],
      [['--model', model, '--backend', 'tpu'], /--backend: expected cpu or webgpu, got "tpu"/],
      [['--model', model, '--max-tokens', '1.5'], /--max-tokens: expected an integer, got "1.5"/],
      [['--model', model, '--tokenizer', tokenizer, '--top-p', '2'], /--top-p: topP must be in \(0, 1\]/],
      [['--model', model, '--frobnicate'], /unknown argument "--frobnicate"/],
      [['--model', model, '-x'], /unknown argument "-x"/],
      [['-m', model, '-m', model], /--model: given twice; give it once/],
      [['-m', model, '-n'], /--max-tokens: expected a value after it/],
      [['-m', model, '--json=yes'], /--json: takes no value/],
      [['-m', model, '-t', '0'], /--threads: expected a positive integer, got "0"/],
      [['-m', model, 'story'], /unexpected argument "story"/],
    ] as const) {
      const { status, stderr } = await cli(...argv);
      expect(status).toBe(2);
      expect(stderr).toMatch(message);
      expect(stderr).toMatch(/^generate: [^\n]*; see loom generate --help\n$|^generate: --top-p: [^\n]*\n$/);
    }
    expect((await cli('--help')).stdout).toMatch(/^usage: loom generate -m PATH -p TEXT/);
    expect((await cli('-h')).stdout).toContain('--no-context-shift');
  });
});
