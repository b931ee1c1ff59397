import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CharTokenizer, loadTokenizer } from '../src/index';
import { dataDir, packageDir } from './helpers';
import { tinyHfJson } from './hf-from-ranks';

const r50k = join(dataDir, 'gpt2/r50k_base.tiktoken');
const tok512 = join(dataDir, 'models/tok512.bin');
const scratch = mkdtempSync(join(tmpdir(), 'loom-tokenize-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `pnpm tokenize`'s script (node --import tsx src/cli.ts) from the package folder. */
function tokenize(
  args: readonly string[],
  initCwd = scratch,
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: packageDir,
    env: { ...process.env, INIT_CWD: initCwd },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(args: readonly string[], initCwd?: string): string {
  const result = tokenize(args, initCwd);
  expect(result.stderr.replace(/training BPE.*\n/s, '')).toBe('');
  expect(result.status).toBe(0);
  return result.stdout.trimEnd();
}

describe('pnpm tokenize', () => {
  it('encodes with a tiktoken rank file, as ids or a JSON array', () => {
    expect(ok(['--tokenizer', r50k, '--text', 'Hello world'])).toBe('15496 995');
    expect(ok(['--tokenizer', r50k, '--json', '--text', 'Hello world <|endoftext|>'])).toBe(
      '[15496,995,1279,91,437,1659,5239,91,29]',
    );
    expect(ok(['--tokenizer', r50k, '--parse-special', '--text', 'Hello<|endoftext|>'])).toBe('15496 50256');
  });

  it('decodes ids given as text or as a JSON array', () => {
    expect(ok(['--tokenizer', r50k, '--decode', '--text', '15496 995'])).toBe('Hello world');
    expect(ok(['--tokenizer', r50k, '--decode', '--json', '--text', '[15496, 995, 198]'])).toBe(
      '"Hello world\\n"',
    );
  });

  it('prepends BOS with a llama2.c tokenizer.bin unless --no-bos', () => {
    expect(ok(['--tokenizer', tok512, '--text', 'Once upon a time'])).toBe('1 403 407 261 378');
    expect(ok(['--tokenizer', tok512, '--no-bos', '--json', '--text', 'Once upon a time'])).toBe(
      '[403,407,261,378]',
    );
    expect(ok(['--tokenizer', tok512, '--decode', '--text', '1 403 407 261 378'])).toBe('Once upon a time');
  });

  it('recognises a Hugging Face tokenizer.json and a Loom JSON by content, whatever their names', () => {
    const hf = join(scratch, 'vocab.data');
    writeFileSync(
      hf,
      JSON.stringify(
        tinyHfJson([
          ['Ġ', 't'],
          ['h', 'e'],
          ['Ġt', 'he'],
        ]),
      ),
    );
    expect(ok(['--tokenizer', hf, '--text', ' the end'])).toBe('258 32 101 110 100');
    const loom = join(scratch, 'chars.bin');
    writeFileSync(loom, JSON.stringify(CharTokenizer.fromCorpus('abc').toJSON()));
    expect(ok(['--tokenizer', loom, '--json', '--text', 'cab'])).toBe('[2,0,1]');
  });

  it('reads --file and resolves relative paths against the directory pnpm was run from', () => {
    writeFileSync(join(scratch, 'input.txt'), 'Once upon a time');
    expect(ok(['--tokenizer', 'models/tok512.bin', '--file', join(scratch, 'input.txt')], dataDir)).toBe(
      '1 403 407 261 378',
    );
    expect(ok(['--tokenizer', tok512, '--file', 'input.txt'])).toBe('1 403 407 261 378');
  });

  it('trains a BPE with a progress bar on stderr and writes a Loom JSON', () => {
    const corpus = readFileSync(join(dataDir, 'tinyshakespeare.txt'), 'utf8').slice(0, 50_000);
    writeFileSync(join(scratch, 'corpus.txt'), corpus);
    const result = tokenize(['train', '--data', 'corpus.txt', '--vocab-size', '400', '--out', 'bpe.json']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/training BPE \[#+\] 100% 143\/143/);
    expect(result.stdout).toMatch(/trained a byte-level BPE of 400 tokens in [\d.]+ s; wrote bpe\.json/);
    const trained = loadTokenizer(readFileSync(join(scratch, 'bpe.json')));
    expect(trained.kind).toBe('bpe');
    expect(trained.vocabSize).toBe(400);
    expect(trained.decode(trained.encode(corpus))).toBe(corpus);
    const ids = ok(['--tokenizer', 'bpe.json', '--json', '--text', 'To be, or not to be']);
    expect(JSON.parse(ids)).toEqual(trained.encode('To be, or not to be'));
  });

  it('rejects a file that is not UTF-8, naming the byte offset, and reads it with --replace-invalid', () => {
    // "Once été" saved as Latin-1, then FF: three invalid sequences, at bytes 5, 7 and 8.
    writeFileSync(
      join(scratch, 'latin1.txt'),
      Uint8Array.from([...Buffer.from('Once '), 0xe9, 0x74, 0xe9, 0xff]),
    );
    const bad = tokenize(['--tokenizer', tok512, '--file', 'latin1.txt']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      'tokenize: --file latin1.txt: not valid UTF-8 (3 invalid byte sequences, the first at byte offset 5); ' +
        'save it as UTF-8, or pass --replace-invalid to read each invalid sequence as U+FFFD\n',
    );
    const expected = loadTokenizer(readFileSync(tok512)).encode('Once \ufffdt\ufffd\ufffd');
    expect(ok(['--tokenizer', tok512, '--no-bos', '--replace-invalid', '--file', 'latin1.txt'])).toBe(
      expected.join(' '),
    );
    const train = tokenize(['train', '--data', 'latin1.txt', '--vocab-size', '300', '--out', 'x.json']);
    expect(train.stderr).toContain('tokenize: --data latin1.txt: not valid UTF-8 (3 invalid byte sequences');
    const text = tokenize(['--tokenizer', tok512, '--replace-invalid', '--text', 'x']);
    expect(text.status).toBe(2);
    expect(text.stderr).toContain('--replace-invalid applies to --file; leave it out with --text');
  });

  it('explains bad flags and bad input', () => {
    const bogus = tokenize(['--tokenizer', r50k, '--bogus']);
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toContain('tokenize: unknown flag --bogus; expected one of --tokenizer');
    expect(bogus.stderr.trim().split('\n')).toHaveLength(1); // one line, naming where the usage is
    expect(bogus.stderr).toContain('; see pnpm tokenize --help');
    expect(tokenize(['--text', 'x']).stderr).toContain('tokenize: --tokenizer is required');
    expect(tokenize(['--tokenizer', r50k]).stderr).toContain(
      'give exactly one of --text TEXT or --file PATH',
    );
    expect(tokenize(['--tokenizer', r50k, '--text']).stderr).toContain('--text needs a value');
    expect(tokenize(['--tokenizer', r50k, '--decode', '--text', '1 x']).stderr).toContain(
      '"x" is not a token id',
    );
    expect(
      tokenize(['train', '--data', 'corpus.txt', '--vocab-size', 'many', '--out', 'x']).stderr,
    ).toContain('--vocab-size: expected an integer of at least 257');
    const range = tokenize(['--tokenizer', r50k, '--decode', '--text', '60000']);
    expect(range.status).toBe(1);
    expect(range.stderr).toContain('decode: id 60000 is out of range for vocabulary size 50257');
    const missing = tokenize(['--tokenizer', 'nope.bin', '--text', 'x']);
    expect(missing.stderr).toContain('--tokenizer nope.bin');
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
    writeFileSync(join(scratch, 'notes.txt'), 'just some notes');
    expect(tokenize(['--tokenizer', 'notes.txt', '--text', 'x']).stderr).toContain(
      'tokenize: notes.txt: not a tokenizer file Loom recognises',
    );
    expect(tokenize(['--help']).stdout).toContain(
      'pnpm tokenize train --data PATH --vocab-size N --out PATH',
    );
  });
});
