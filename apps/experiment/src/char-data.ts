import { readFileSync } from 'node:fs';
import { CharTokenizer } from '@loom/tokenizer';
import { generateStories } from '@loom/trainer/lib';

/** Character ids of the trainer's built-in stories, split 90 / 10 into training and validation. */
export interface CharData {
  readonly vocabSize: number;
  readonly train: Int32Array;
  readonly val: Int32Array;
  readonly tokenizer: CharTokenizer;
  /** What the text is, for reports. */
  readonly source: string;
}

function readCorpus(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(
      `--data ${path}: cannot read it (${error instanceof Error ? error.message : String(error)}); give a UTF-8 text file`,
    );
  }
  if (text.length < 1000)
    throw new Error(`--data ${path}: ${text.length} characters is too little; give at least 1000`);
  return text;
}

/**
 * The corpus an experiment trains on: the text file at `path` when given (whole), else the trainer's built-in
 * generated stories (`chars` characters, fixed seed), so an experiment needs no file and every architecture
 * sees the same text.
 */
export function charData(chars: number, path?: string): CharData {
  const text = path === undefined ? generateStories(undefined, chars) : readCorpus(path);
  const tokenizer = CharTokenizer.fromCorpus(text);
  const ids = Int32Array.from(tokenizer.encode(text));
  const cut = Math.floor(ids.length * 0.9);
  const source =
    path === undefined
      ? `${chars} characters of the built-in stories`
      : `${path} (${text.length} characters)`;
  return {
    vocabSize: tokenizer.vocabSize,
    train: ids.subarray(0, cut),
    val: ids.subarray(cut),
    tokenizer,
    source,
  };
}
