import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loom } from './loom-io';

const models = fileURLToPath(new URL('../../../../shared/data/models/', import.meta.url));

describe('loom', () => {
  it('lists its commands with --help, and takes help COMMAND', async () => {
    const help = await loom(models, '--help');
    expect(help.status).toBe(0);
    for (const name of ['train', 'generate', 'chat', 'tokenize', 'bench', 'convert']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    }
    expect((await loom(models, 'help', 'generate')).stdout).toMatch(/^usage: loom generate -m PATH -p TEXT/);
    for (const [name, usage] of [
      ['train', /^usage: loom train \[flags\]/],
      ['chat', /^usage: loom chat -m PATH/],
      ['tokenize', /^usage:\n {2}loom tokenize --tokenizer PATH/],
      ['bench', /^usage: loom bench <suite>/],
      ['convert', /^usage: loom convert IN OUT/],
    ] as const) {
      const result = await loom(models, name, '--help');
      expect(result.status, name).toBe(0);
      expect(result.stdout, name).toMatch(usage);
    }
  });

  it('runs each app in this process with its short aliases and --flag=value', async () => {
    const ids = await loom(models, 'tokenize', '--tokenizer=tok512.bin', '-p', 'Once upon a time');
    expect(ids).toMatchObject({ status: 0, stdout: '1 403 407 261 378\n', stderr: '' });
    const story = await loom(
      models,
      'generate',
      '-m',
      'stories260K.bin',
      '--tokenizer=tok512.bin',
      '-n8',
      '-s',
      '1',
    );
    expect(story.status).toBe(0);
    expect(story.stderr).toMatch(/^8 tokens, stop: max-tokens; prefill 1 tokens/);
  });

  it('gives exit status 2 and one line on stderr for bad usage, 1 for failures', async () => {
    const cases: [string[], number, RegExp][] = [
      [
        [],
        2,
        /^loom: expected a command \(train, generate, chat, tokenize, bench, serve, convert, quantize, perplexity, seq2seq\); see loom --help$/,
      ],
      [['serving'], 2, /^loom: unknown command "serving"/],
      [['serve'], 2, /^serve: --model PATH is required/],
      [['generate', '--bogus'], 2, /^generate: unknown argument "--bogus"; see loom generate --help$/],
      [
        ['train', '--layers', '0'],
        2,
        /^train: --layers: expected an integer >= 1, got 0; see loom train --help$/,
      ],
      [['train', '-x'], 2, /^train: unknown flag -x; see loom train --help$/],
      [
        ['tokenize', '--tokenizer', 'tok512.bin', '--bogus'],
        2,
        /^tokenize: unknown flag --bogus; expected one of/,
      ],
      [['bench'], 2, /^bench: expected a suite \(tokenizer, .*\); see loom bench --help$/],
      [['bench', 'memory', '--batch=0'], 2, /^bench: --batch: expected an integer ≥ 1, got "0"$/],
      [['chat'], 2, /^chat: --model: required/],
      [['chat', '-m', 'x.bin', '--top-p', '2'], 2, /^chat: --top-p: topP must be in \(0, 1\]/],
      [['chat', '-m', 'nope.bin'], 1, /^chat: --model nope\.bin \(.*\): no such file or directory/],
      [['generate', '-m', 'nope.bin'], 1, /^generate: --model nope\.bin \(.*\): no such file or directory/],
      [
        ['tokenize', '--tokenizer', 'nope.bin', '-p', 'x'],
        1,
        /^tokenize: --tokenizer nope\.bin .*cannot read it/,
      ],
    ];
    for (const [argv, status, message] of cases) {
      const result = await loom(models, ...argv);
      expect(result.status, argv.join(' ')).toBe(status);
      expect(result.stderr.endsWith('\n') && result.stderr.split('\n')).toHaveLength(2);
      expect(result.stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
  });
});
