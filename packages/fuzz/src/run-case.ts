import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModelFile } from '@loom/models';
import { loadTokenizer } from '@loom/tokenizer';
import type { FuzzCase } from './make-case';

/**
 * How one case ended. `loaded` and `refused` are the two good endings; `unclear` is an error that does not say which
 * input is wrong (an engine error such as a TypeError or RangeError, or a message without the file's name).
 */
export type Outcome =
  | { readonly kind: 'loaded' }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'unclear'; readonly message: string };

/** Ids a loaded tokenizer must decode, and whose text it must encode again. */
const ROUND_TRIP_IDS = 2000;

function load(testCase: FuzzCase, dir: string): void {
  const path = join(dir, testCase.entry);
  if (testCase.target === 'model') {
    loadModelFile(path);
    return;
  }
  const tokenizer = loadTokenizer(testCase.files[testCase.entry], path);
  const ids = Array.from({ length: Math.min(tokenizer.vocabSize, ROUND_TRIP_IDS) }, (_, id) => id);
  tokenizer.encode(tokenizer.decode(ids), { specialTokens: 'parse' });
}

export function classify(error: unknown, dir: string): Outcome {
  if (!(error instanceof Error)) return { kind: 'unclear', message: `threw a non-Error: ${String(error)}` };
  const message = error.message;
  const plain = error.constructor === Error;
  if (plain && message.includes(dir)) return { kind: 'refused', message };
  return { kind: 'unclear', message: `${error.name}: ${message}` };
}

/** Writes the case's files to a fresh `dir`, hands them to their loader and says how it ended. */
export function runCase(testCase: FuzzCase, dir: string): Outcome {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(testCase.files)) writeFileSync(join(dir, name), bytes);
  try {
    load(testCase, dir);
    return { kind: 'loaded' };
  } catch (error) {
    return classify(error, dir);
  }
}
