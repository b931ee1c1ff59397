import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { trainBpe } from './bpe/train';
import { type CliCommand, type CliInput, parseArgs, parseIds, USAGE, UsageError } from './cli/args';
import { progressBar } from './cli/progress';
import { loadTokenizer } from './formats/detect';
import type { Tokenizer } from './tokenizer';
import { findInvalidUtf8, utf8Decode } from './utf8';

/** pnpm runs scripts inside the package; user paths are relative to where pnpm was invoked (INIT_CWD). */
function userPath(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

function readUserFile(path: string, what: string): Buffer {
  try {
    return readFileSync(userPath(path));
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new Error(`${what} ${path} (${userPath(path)}): cannot read it (${reason}); check the path`);
  }
}

/** The text of a UTF-8 file; invalid sequences are an error, or read as U+FFFD with `replaceInvalid`. */
function readTextFile(path: string, what: string, replaceInvalid: boolean): string {
  const bytes = readUserFile(path, what);
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

function readInput(input: CliInput): string {
  return input.kind === 'text' ? input.text : readTextFile(input.path, '--file', input.replaceInvalid);
}

function openTokenizer(path: string): Tokenizer {
  return loadTokenizer(readUserFile(path, '--tokenizer'), basename(path));
}

function run(command: CliCommand): void {
  switch (command.kind) {
    case 'help':
      console.log(USAGE);
      return;
    case 'encode': {
      const tokenizer = openTokenizer(command.tokenizer);
      const ids = tokenizer.encode(readInput(command.input), {
        bos: command.bos && tokenizer.kind === 'llama2c',
        specialTokens: command.parseSpecial ? 'parse' : 'text',
      });
      console.log(command.json ? JSON.stringify(ids) : ids.join(' '));
      return;
    }
    case 'decode': {
      const tokenizer = openTokenizer(command.tokenizer);
      const text = tokenizer.decode(parseIds(readInput(command.input)));
      console.log(command.json ? JSON.stringify(text) : text);
      return;
    }
    case 'train': {
      const text = readTextFile(command.data, '--data', command.replaceInvalid);
      const start = performance.now();
      const tokenizer = trainBpe(text, {
        vocabSize: command.vocabSize,
        onProgress: progressBar(process.stderr, 'training BPE'),
      });
      const seconds = ((performance.now() - start) / 1000).toFixed(2);
      writeFileSync(userPath(command.out), `${JSON.stringify(tokenizer.toJSON())}\n`);
      console.log(
        `trained a byte-level BPE of ${tokenizer.vocabSize} tokens in ${seconds} s; wrote ${command.out}`,
      );
      return;
    }
  }
}

try {
  run(parseArgs(process.argv.slice(2)));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`tokenize: ${message}`);
  if (error instanceof UsageError) console.error(USAGE);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
