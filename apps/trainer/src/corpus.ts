import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { generateStories } from './stories';

/** The text a run trains on and where it came from. */
export interface Corpus {
  readonly text: string;
  /** The file, or `generated stories`. */
  readonly source: string;
  /** SHA-256 of the text's UTF-8 bytes: a resumed run checks it has the same data. */
  readonly sha256: string;
}

/** Share of the text (from its start) that is trained on; the rest is the validation split. */
const TRAIN_FRACTION = 0.9;

/** Reads `path` as UTF-8, or generates the built-in short stories when no path is given. */
export function loadCorpus(path: string | undefined): Corpus {
  if (path === undefined) {
    const text = generateStories();
    return { text, source: 'generated stories', sha256: sha256(Buffer.from(text, 'utf8')) };
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new Error(`--data ${path}: cannot read it (${reason}); check the path`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`--data ${path}: not valid UTF-8 text; convert it to UTF-8 first`);
  }
  return { text, source: path, sha256: sha256(bytes) };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The first 90% of the text (in UTF-16 units, never inside a surrogate pair) and the rest. */
export function splitCorpus(text: string): { readonly train: string; readonly val: string } {
  let cut = Math.floor(text.length * TRAIN_FRACTION);
  const unit = text.charCodeAt(cut);
  if (unit >= 0xdc00 && unit <= 0xdfff) cut--;
  return { train: text.slice(0, cut), val: text.slice(cut) };
}
