import { unicodeToBytes } from '../bpe/byte-unicode';
import { ByteLevelBpeTokenizer } from '../bpe/encoder';
import { type AddedTokenJson, readAddedTokens } from '../hf/added-tokens';
import { compileDecoder } from '../hf/decoders';
import { compileModel } from '../hf/models';
import { readMerge } from '../hf/models/read-merge';
import { compileNormalizer } from '../hf/normalizers';
import { HfTokenizer } from '../hf/pipeline';
import { compilePostProcessor } from '../hf/post-processors';
import { compilePreTokenizer } from '../hf/pre-tokenizers';
import type { Tokenizer } from '../tokenizer';
import {
  isJsonObject,
  type JsonObject,
  parseJson,
  readArray,
  readInteger,
  readObject,
  readString,
} from './json-read';

export interface HfJsonOptions {
  /** Names the file in error messages. Default `'tokenizer.json'`. */
  readonly source?: string;
  /**
   * The model's `tokenizer_config.json` (parsed or as text): its `bos_token` and `eos_token` name BOS and EOS.
   * Without it they are the special tokens found by name (`<|begin_of_text|>`, `<s>`, `<bos>`, `<|endoftext|>`; `<|end_of_text|>`,
   * `</s>`, `<eos>`, `<|endoftext|>`).
   */
  readonly config?: unknown;
  /** BOS/EOS ids, overriding the config (`null`: none). */
  readonly bos?: number | null;
  readonly eos?: number | null;
}

const BOS_NAMES = ['<|begin_of_text|>', '<s>', '<bos>', '<|endoftext|>'];
const EOS_NAMES = ['<|end_of_text|>', '</s>', '<eos>', '<|endoftext|>'];

function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === false || value === '' || value === 0;
}

/**
 * True for the GPT-2 layout that Loom's byte-level BPE runs directly (and faster): no normalizer, a ByteLevel
 * pre-tokenizer with GPT-2's pattern and no prefix space, a plain BPE model, ByteLevel decoding, and added tokens
 * that are all special with no stripping rules.
 */
function isPlainGpt2(root: JsonObject, added: readonly AddedTokenJson[]): boolean {
  const { pre_tokenizer: pre, model, decoder, post_processor: post } = root;
  const plainModelKeys = [
    'unk_token',
    'continuing_subword_prefix',
    'end_of_word_suffix',
    'byte_fallback',
    'ignore_merges',
    'dropout',
  ];
  return (
    isUnset(root.normalizer) &&
    isJsonObject(pre) &&
    pre.type === 'ByteLevel' &&
    isUnset(pre.add_prefix_space) &&
    pre.use_regex !== false &&
    isJsonObject(model) &&
    (model.type === undefined || model.type === 'BPE') &&
    plainModelKeys.every((key) => isUnset(model[key])) &&
    (isUnset(post) || (isJsonObject(post) && post.type === 'ByteLevel')) &&
    isJsonObject(decoder) &&
    decoder.type === 'ByteLevel' &&
    added.every((token) => token.special && !token.lstrip && !token.rstrip && !token.single_word)
  );
}

/** A config's `bos_token`/`eos_token`: a string, an `{ "content": ... }` object, or null. */
function configToken(config: JsonObject, key: string, source: string): string | null | undefined {
  const value = config[key];
  if (value === undefined || value === null) return value === null ? null : undefined;
  if (typeof value === 'string') return value;
  return readString(readObject(value, source, key).content, source, `${key}.content`);
}

function role(
  explicit: number | null | undefined,
  config: JsonObject | undefined,
  key: 'bos_token' | 'eos_token',
  names: readonly string[],
  idOf: (text: string) => number | undefined,
  addedIds: ReadonlyMap<string, number>,
  source: string,
): number | undefined {
  if (explicit !== undefined) return explicit ?? undefined;
  const text =
    config === undefined ? undefined : configToken(config, key, `${source} (tokenizer_config.json)`);
  if (text === null) return undefined;
  if (text !== undefined) {
    const id = idOf(text);
    if (id === undefined) {
      throw new Error(
        `${source} (tokenizer_config.json): key "${key}": ${JSON.stringify(text)} is not a token of the tokenizer; ` +
          'use the tokenizer_config.json that belongs to this tokenizer.json',
      );
    }
    return id;
  }
  return names.map((name) => addedIds.get(name)).find((id) => id !== undefined);
}

function fastGpt2(
  root: JsonObject,
  added: readonly AddedTokenJson[],
  bos: (idOf: (text: string) => number | undefined) => number | undefined,
  eos: (idOf: (text: string) => number | undefined) => number | undefined,
  source: string,
  maxId: number,
): ByteLevelBpeTokenizer {
  const specialIds = new Map(added.map((token) => [token.content, token.id]));
  const model = readObject(root.model, source, 'model');
  const vocab = readObject(model.vocab, source, 'model.vocab');
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
  const merges = readArray(model.merges, source, 'model.merges').map((entry, index): [number, number] => {
    const path = `model.merges[${index}]`;
    const [left, right] = readMerge(entry, source, path);
    const idOf = (token: string): number => {
      const id = idOfToken.get(token);
      if (id === undefined) {
        throw new Error(
          `${source}: key "${path}": ${JSON.stringify(token)} is not in model.vocab; merges must join vocabulary tokens`,
        );
      }
      return id;
    };
    return [idOf(left), idOf(right)];
  });
  const specialOnly = (text: string) => specialIds.get(text);
  return new ByteLevelBpeTokenizer({
    tokens,
    merging: { kind: 'merges', merges },
    specialTokens: added.map((token) => ({ text: token.content, id: token.id })),
    bos: bos(specialOnly),
    eos: eos(specialOnly),
    source,
  });
}

/**
 * Loads a Hugging Face `tokenizer.json`: normalizers, pre-tokenizers, a BPE, WordPiece or Unigram model, added
 * tokens, post-processors and decoders (see the README for the list). A plain GPT-2 file loads as Loom's
 * byte-level BPE (`kind: 'bpe'`); anything else runs the whole pipeline (`kind: 'hf'`). An unsupported
 * component is refused by name and key path.
 */
export function tokenizerFromHfJson(json: unknown, options: HfJsonOptions = {}): Tokenizer {
  const source = options.source ?? 'tokenizer.json';
  const root = readObject(typeof json === 'string' ? parseJson(json, source) : json, source, '(root)');
  const config =
    options.config === undefined
      ? undefined
      : readObject(
          typeof options.config === 'string'
            ? parseJson(options.config, `${source} (tokenizer_config.json)`)
            : options.config,
          `${source} (tokenizer_config.json)`,
          '(root)',
        );
  const model = readObject(root.model, source, 'model');
  const vocab = model.vocab;
  const entries = Array.isArray(vocab)
    ? vocab.length
    : Object.keys(readObject(vocab, source, 'model.vocab')).length;
  const addedCount =
    root.added_tokens === undefined || root.added_tokens === null
      ? 0
      : readArray(root.added_tokens, source, 'added_tokens').length;
  // Ids number the entries from 0; bounding them by the entry count keeps the id table as small as the file.
  const maxId = entries + addedCount - 1;
  const added = readAddedTokens(root.added_tokens, source, maxId);
  // Only special tokens are found by name (Gemma also has plain added tokens "<s>" and "</s>").
  const addedIds = new Map(added.filter((token) => token.special).map((token) => [token.content, token.id]));
  const bos = (idOf: (text: string) => number | undefined) =>
    role(options.bos, config, 'bos_token', BOS_NAMES, idOf, addedIds, source);
  const eos = (idOf: (text: string) => number | undefined) =>
    role(options.eos, config, 'eos_token', EOS_NAMES, idOf, addedIds, source);
  if (isPlainGpt2(root, added)) return fastGpt2(root, added, bos, eos, source, maxId);

  const optional = <T>(
    key: string,
    compile: (value: unknown, source: string, path: string) => T,
  ): T | undefined =>
    root[key] === undefined || root[key] === null ? undefined : compile(root[key], source, key);
  const compiledModel = compileModel(model, source, maxId);
  const idOf = (text: string) => addedIds.get(text) ?? compiledModel.vocab.get(text);
  return new HfTokenizer(
    {
      json: root,
      normalize: optional('normalizer', compileNormalizer),
      preTokenize: optional('pre_tokenizer', compilePreTokenizer),
      model: compiledModel,
      postProcess: optional('post_processor', (value, s, path) =>
        compilePostProcessor(value, s, path, maxId),
      ),
      decode: optional('decoder', compileDecoder),
      added,
      bos: bos(idOf),
      eos: eos(idOf),
    },
    source,
  );
}
