import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { trainBpe } from '../bpe/train';
import { loadTokenizer } from '../formats/detect';
import type { Tokenizer } from '../tokenizer';
import { findInvalidUtf8, utf8Decode } from '../utf8';
import { type CliCommand, type CliInput, parseCommand, parseIds, UsageError, usage } from './args';
import { progressBar } from './progress';

/** Where the CLI writes, the environment it reads (INIT_CWD) and the command that runs it, for the usage. */
export interface TokenizeIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** `pnpm tokenize`, `loom tokenize`. */
  readonly program: string;
}

/** pnpm runs scripts inside the package; user paths are relative to where pnpm was invoked (INIT_CWD). */
function userPath(path: string, io: TokenizeIo): string {
  return resolve(io.env.INIT_CWD ?? process.cwd(), path);
}

function readUserFile(path: string, what: string, io: TokenizeIo): Buffer {
  try {
    return readFileSync(userPath(path, io));
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new Error(`${what} ${path} (${userPath(path, io)}): cannot read it (${reason}); check the path`);
  }
}

/** The text of a UTF-8 file; invalid sequences are an error, or read as U+FFFD with `replaceInvalid`. */
function readTextFile(path: string, what: string, replaceInvalid: boolean, io: TokenizeIo): string {
  const bytes = readUserFile(path, what, io);
  const invalid = replaceInvalid ? undefined : findInvalidUtf8(bytes);
  if (invalid !== undefined) {
    const sequences =
      invalid.count === 1 ? '1 invalid byte sequence' : `${invalid.count} invalid byte sequences`;
    throw new Error(
      `${what} ${path}: not valid UTF-8 (${sequences}, the first at byte offset ${invalid.offset}); ` +
        'save it as UTF-8, or pass --replace-invalid to read each invalid sequence as U+FFFD',
    );
  }
  return utf8Decode(bytes);
}

function readInput(input: CliInput, io: TokenizeIo): string {
  return input.kind === 'text' ? input.text : readTextFile(input.path, '--file', input.replaceInvalid, io);
}

function openTokenizer(path: string, io: TokenizeIo): Tokenizer {
  return loadTokenizer(readUserFile(path, '--tokenizer', io), basename(path));
}

/** Writes the file under a temporary name, then renames it into place: a failed write leaves no partial file. */
function writeAtomically(path: string, text: string): void {
  const staged = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(staged, text);
    renameSync(staged, path);
  } finally {
    rmSync(staged, { force: true });
  }
}

function run(command: CliCommand, io: TokenizeIo): void {
  switch (command.kind) {
    case 'help':
      io.stdout(`${usage(io.program)}\n`);
      return;
    case 'encode': {
      const tokenizer = openTokenizer(command.tokenizer, io);
      const ids = tokenizer.encode(readInput(command.input, io), {
        bos: command.bos && tokenizer.kind === 'llama2c',
        specialTokens: command.parseSpecial ? 'parse' : 'text',
      });
      io.stdout(`${command.json ? JSON.stringify(ids) : ids.join(' ')}\n`);
      return;
    }
    case 'decode': {
      const tokenizer = openTokenizer(command.tokenizer, io);
      const text = tokenizer.decode(parseIds(readInput(command.input, io)));
      io.stdout(`${command.json ? JSON.stringify(text) : text}\n`);
      return;
    }
    case 'train': {
      const text = readTextFile(command.data, '--data', command.replaceInvalid, io);
      const start = performance.now();
      const tokenizer = trainBpe(text, {
        vocabSize: command.vocabSize,
        onProgress: progressBar(io.stderr, 'training BPE'),
      });
      const seconds = ((performance.now() - start) / 1000).toFixed(2);
      writeAtomically(userPath(command.out, io), `${JSON.stringify(tokenizer.toJSON())}\n`);
      io.stdout(
        `trained a byte-level BPE of ${tokenizer.vocabSize} tokens in ${seconds} s; wrote ${command.out}\n`,
      );
      return;
    }
  }
}

/** Runs the tokenizer CLI with these arguments; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: TokenizeIo): Promise<number> {
  try {
    run(parseCommand(argv), io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usageError = error instanceof UsageError;
    io.stderr(`tokenize: ${message}${usageError ? `; see ${io.program} --help` : ''}\n`);
    return usageError ? 2 : 1;
  }
}
