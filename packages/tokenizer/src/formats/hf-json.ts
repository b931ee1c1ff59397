import { unicodeToBytes } from '../bpe/byte-unicode';
import { ByteLevelBpeTokenizer } from '../bpe/encoder';
import type { SpecialToken } from '../tokenizer';
import { describe, fail, readArray, readInteger, readObject, readString } from './json-read';

export interface HfJsonOptions {
  /** Names the file in error messages. Default `'tokenizer.json'`. */
  readonly source?: string;
}

/** Parses JSON text, naming the source when it is not JSON. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === false || value === '';
}

function requireUnset(
  object: { readonly [key: string]: unknown },
  key: string,
  path: string,
  why: string,
  source: string,
): void {
  if (!isUnset(object[key])) fail(source, `${path}${key}`, `null or absent (${why})`, object[key]);
}

/**
 * Loads a Hugging Face `tokenizer.json` whose model is a GPT-2-style byte-level BPE (ByteLevel pre-tokenizer, no
 * normalizer). `added_tokens` become special tokens; `<|endoftext|>` (else `<s>`/`</s>`) becomes BOS/EOS.
 */
export function tokenizerFromHfJson(json: unknown, options: HfJsonOptions = {}): ByteLevelBpeTokenizer {
  const source = options.source ?? 'tokenizer.json';
  const root = readObject(typeof json === 'string' ? parseJsonText(json, source) : json, source, '(root)');
  requireUnset(root, 'normalizer', '', 'Loom supports byte-level BPE without a normalizer', source);
  const pre = readObject(root.pre_tokenizer, source, 'pre_tokenizer');
  if (pre.type !== 'ByteLevel')
    fail(source, 'pre_tokenizer.type', '"ByteLevel" (GPT-2-style byte-level BPE)', pre.type);
  requireUnset(pre, 'add_prefix_space', 'pre_tokenizer.', 'Loom does not add a prefix space', source);
  if (pre.use_regex !== undefined && pre.use_regex !== true) {
    fail(source, 'pre_tokenizer.use_regex', 'true (the GPT-2 pattern)', pre.use_regex);
  }
  const model = readObject(root.model, source, 'model');
  if (model.type !== undefined && model.type !== 'BPE') fail(source, 'model.type', '"BPE"', model.type);
  for (const key of [
    'continuing_subword_prefix',
    'end_of_word_suffix',
    'byte_fallback',
    'ignore_merges',
    'dropout',
  ]) {
    requireUnset(model, key, 'model.', 'not part of GPT-2-style BPE', source);
  }

  const specialTokens: SpecialToken[] = [];
  const addedTokens =
    root.added_tokens === undefined ? [] : readArray(root.added_tokens, source, 'added_tokens');
  const vocab = readObject(model.vocab, source, 'model.vocab');
  // Ids number the entries from 0; bounding them by the entry count keeps the id table as small as the file.
  const maxId = Object.keys(vocab).length + addedTokens.length - 1;
  addedTokens.forEach((entry, index) => {
    const path = `added_tokens[${index}]`;
    const added = readObject(entry, source, path);
    specialTokens.push({
      text: readString(added.content, source, `${path}.content`),
      id: readInteger(added.id, source, `${path}.id`, 0, maxId),
    });
  });
  const specialIds = new Map(specialTokens.map((token) => [token.text, token.id]));

  const tokens: (Uint8Array | null)[] = [];
  const idOfToken = new Map<string, number>();
  for (const [token, value] of Object.entries(vocab)) {
    const path = `model.vocab[${JSON.stringify(token)}]`;
    const id = readInteger(value, source, path, 0, maxId);
    idOfToken.set(token, id);
    if (specialIds.get(token) === id) continue;
    const bytes = unicodeToBytes(token);
    if (!(bytes instanceof Uint8Array)) {
      const codePoint = token.codePointAt(bytes.badIndex)!.toString(16).toUpperCase().padStart(4, '0');
      throw new Error(
        `${source}: key "${path}": character U+${codePoint} at index ${bytes.badIndex} is outside GPT-2's ` +
          'byte-to-unicode alphabet; expected a byte-level BPE vocabulary (bytes written as in GPT-2, space as "Ġ")',
      );
    }
    if (tokens[id] !== undefined && tokens[id] !== null) {
      throw new Error(
        `${source}: key "${path}": id ${id} is already used by another token; each id must be unique`,
      );
    }
    while (tokens.length <= id) tokens.push(null);
    tokens[id] = bytes;
  }

  const rawMerges = readArray(model.merges, source, 'model.merges');
  const merges = rawMerges.map((entry, index): [number, number] => {
    const path = `model.merges[${index}]`;
    const parts =
      typeof entry === 'string'
        ? entry.split(' ')
        : Array.isArray(entry) && entry.every((p) => typeof p === 'string')
          ? entry
          : undefined;
    if (parts === undefined || parts.length !== 2 || parts[0] === '' || parts[1] === '') {
      throw new Error(
        `${source}: key "${path}": expected "left right" or ["left", "right"], got ${describe(entry)}`,
      );
    }
    const idOf = (token: string): number => {
      const id = idOfToken.get(token);
      if (id === undefined) {
        throw new Error(
          `${source}: key "${path}": ${JSON.stringify(token)} is not in model.vocab; merges must join vocabulary tokens`,
        );
      }
      return id;
    };
    return [idOf(parts[0]), idOf(parts[1])];
  });

  const endOfText = specialIds.get('<|endoftext|>');
  return new ByteLevelBpeTokenizer({
    tokens,
    merging: { kind: 'merges', merges },
    specialTokens,
    bos: endOfText ?? specialIds.get('<s>'),
    eos: endOfText ?? specialIds.get('</s>'),
    source,
  });
}
