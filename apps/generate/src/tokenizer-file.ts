import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { looksLikeGguf, readGgufTokenizerJson } from '@loom/models';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import { readUserFile, userPath } from './paths';

/** A tokenizer read from a file a flag names, with the file's bytes when it is a tokenizer file (not a GGUF). */
export interface TokenizerFromFile {
  readonly tokenizer: Tokenizer;
  readonly bytes?: Uint8Array;
}

/** The first bytes of a file (fewer when it is shorter). */
function headOfFile(path: string, count: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const head = new Uint8Array(count);
    return head.subarray(0, readSync(fd, head, 0, count, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * The tokenizer in the file `path` names for `flag`: any tokenizer file Loom reads, or a GGUF model, whose
 * vocabulary is read from its header alone (its tensors are never read, so a large model is cheap to name).
 */
export function readTokenizerFile(flag: string, path: string, env: NodeJS.ProcessEnv): TokenizerFromFile {
  const absolute = userPath(path, env);
  // Only a regular file is opened to sniff it (opening a FIFO would block); readUserFile refuses the rest by name.
  if (existsSync(absolute) && statSync(absolute).isFile() && looksLikeGguf(headOfFile(absolute, 4))) {
    const json = readGgufTokenizerJson(absolute);
    return {
      tokenizer: loadTokenizer(new TextEncoder().encode(json), `${basename(path)} (GGUF vocabulary)`),
    };
  }
  const bytes = new Uint8Array(readUserFile(flag, path, env));
  return { tokenizer: loadTokenizer(bytes, basename(path)), bytes };
}
