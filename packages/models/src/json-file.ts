import { readFileSync } from 'node:fs';
import { parseJson } from '@loom/tokenizer';
import { statRegularFile } from './file-source';

/** A config.json larger than this is not a model config. */
export const MAX_CONFIG_BYTES = 16 << 20;

/** Reads and parses a small JSON file (a config), refusing anything but a regular file of sane size. */
export function readJsonFile(path: string, what: string): unknown {
  const { size } = statRegularFile(path, what);
  if (size > MAX_CONFIG_BYTES) {
    throw new Error(`${path}: ${size} bytes is too large for ${what} (at most ${MAX_CONFIG_BYTES})`);
  }
  return parseJson(readFileSync(path, 'utf8'), path);
}
