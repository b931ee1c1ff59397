import { type ParseArgsConfig, parseArgs } from 'node:util';

/** Where the CLI reads its input: literal text or a file (which must be UTF-8 unless `replaceInvalid`). */
export type CliInput =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'file'; readonly path: string; readonly replaceInvalid: boolean };

export type CliCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'encode';
      readonly tokenizer: string;
      readonly input: CliInput;
      readonly json: boolean;
      /** Prepend BOS where the format's reference does (llama2.c); false with --no-bos. */
      readonly bos: boolean;
      readonly parseSpecial: boolean;
    }
  | { readonly kind: 'decode'; readonly tokenizer: string; readonly input: CliInput; readonly json: boolean }
  | {
      readonly kind: 'train';
      readonly data: string;
      readonly replaceInvalid: boolean;
      readonly vocabSize: number;
      readonly out: string;
    };

/** The usage text, with the command that runs the CLI (`pnpm tokenize`, `loom tokenize`). */
export function usage(program: string): string {
  return `usage:
  ${program} --tokenizer PATH [--json] [--no-bos] [--parse-special] (-p TEXT | -f PATH)
      prints the token ids of the text (a JSON array with --json)
  ${program} --tokenizer PATH --decode [--json] (-p "IDS" | -f PATH)
      prints the text of the ids (space- or comma-separated, or a JSON array; a JSON string with --json)
  ${program} train --data PATH --vocab-size N --out PATH
      learns a byte-level BPE from a text file and writes it as Loom tokenizer JSON

-p is --text, -f is --file; flags take --flag VALUE or --flag=VALUE. PATH may be a tiktoken rank file, a
Hugging Face tokenizer.json, a llama2.c tokenizer.bin or a Loom tokenizer JSON; the format is recognised
from the content. With a llama2.c tokenizer BOS is prepended, as llama2.c's run.c does (--no-bos to omit).
--parse-special turns special-token text such as <|endoftext|> into its id; by default it is encoded as
plain text. A --file or --data that is not valid UTF-8 is an error naming the byte offset of the first
invalid sequence; add --replace-invalid to read each invalid sequence as U+FFFD instead.`;
}

/** A command-line mistake; the CLI prints it on one line and exits with status 2. */
export class UsageError extends Error {}

type FlagSpec = NonNullable<ParseArgsConfig['options']>;

const ENCODE_FLAGS: FlagSpec = {
  tokenizer: { type: 'string' },
  text: { type: 'string', short: 'p' },
  file: { type: 'string', short: 'f' },
  json: { type: 'boolean' },
  decode: { type: 'boolean' },
  'no-bos': { type: 'boolean' },
  'parse-special': { type: 'boolean' },
  'replace-invalid': { type: 'boolean' },
};

const TRAIN_FLAGS: FlagSpec = {
  data: { type: 'string' },
  'vocab-size': { type: 'string' },
  out: { type: 'string' },
  'replace-invalid': { type: 'boolean' },
};

/**
 * Reads `--flag value` / `--flag=value` / `-p value` / `--switch` arguments with util.parseArgs into a map keyed by
 * the long flag (`--text`), rejecting unknown, repeated and positional arguments with a message naming them.
 */
function readFlags(argv: readonly string[], known: FlagSpec): Map<string, string> {
  const { tokens } = parseArgs({
    args: [...argv],
    options: known,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const expected = Object.keys(known)
    .map((name) => `--${name}`)
    .join(', ');
  const flags = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind === 'positional') {
      throw new UsageError(
        `unexpected argument ${JSON.stringify(token.value)}; expected flags (${expected})`,
      );
    }
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(known, token.name) ? known[token.name] : undefined;
    if (spec === undefined)
      throw new UsageError(`unknown flag ${token.rawName}; expected one of ${expected}`);
    const name = `--${token.name}`;
    if (flags.has(name)) throw new UsageError(`${name} is given twice; give it once`);
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${name} takes no value; write just ${name}`);
      flags.set(name, '');
      continue;
    }
    if (token.value === undefined)
      throw new UsageError(`${name} needs a value, e.g. ${name} ${name === '--text' ? '"hello"' : 'PATH'}`);
    flags.set(name, token.value);
  }
  return flags;
}

function required(flags: Map<string, string>, name: string): string {
  const value = flags.get(name);
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

function readInput(flags: Map<string, string>): CliInput {
  const text = flags.get('--text');
  const file = flags.get('--file');
  if ((text === undefined) === (file === undefined))
    throw new UsageError('give exactly one of --text TEXT or --file PATH');
  const replaceInvalid = flags.has('--replace-invalid');
  if (text === undefined) return { kind: 'file', path: file!, replaceInvalid };
  if (replaceInvalid) throw new UsageError('--replace-invalid applies to --file; leave it out with --text');
  return { kind: 'text', text };
}

/** Parses the CLI's arguments (without `node` and the script; a leading `--` from pnpm is ignored). */
export function parseCommand(argv: readonly string[]): CliCommand {
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) return { kind: 'help' };
  if (args[0] === 'train') {
    const flags = readFlags(args.slice(1), TRAIN_FLAGS);
    const sizeText = required(flags, '--vocab-size');
    const vocabSize = Number(sizeText);
    if (!/^\d+$/.test(sizeText) || vocabSize < 257) {
      throw new UsageError(
        `--vocab-size: expected an integer of at least 257 (256 bytes + <|endoftext|>), got ${JSON.stringify(sizeText)}`,
      );
    }
    return {
      kind: 'train',
      data: required(flags, '--data'),
      replaceInvalid: flags.has('--replace-invalid'),
      vocabSize,
      out: required(flags, '--out'),
    };
  }
  const flags = readFlags(args, ENCODE_FLAGS);
  const tokenizer = required(flags, '--tokenizer');
  const input = readInput(flags);
  const json = flags.has('--json');
  if (flags.has('--decode')) {
    for (const name of ['--no-bos', '--parse-special']) {
      if (flags.has(name)) throw new UsageError(`${name} applies when encoding; leave it out with --decode`);
    }
    return { kind: 'decode', tokenizer, input, json };
  }
  return {
    kind: 'encode',
    tokenizer,
    input,
    json,
    bos: !flags.has('--no-bos'),
    parseSpecial: flags.has('--parse-special'),
  };
}

/** Parses ids given as text: a JSON array, or integers separated by spaces or commas. */
export function parseIds(text: string): number[] {
  const body = text.trim().replace(/^\[/, '').replace(/\]$/, '').trim();
  if (body === '') return [];
  return body.split(/[\s,]+/).map((part) => {
    if (!/^\d+$/.test(part))
      throw new UsageError(
        `--decode: ${JSON.stringify(part)} is not a token id; expected non-negative integers`,
      );
    return Number(part);
  });
}
