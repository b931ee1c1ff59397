import { unicodeToBytes } from '../bpe/byte-unicode';
import { ByteLevelBpeTokenizer } from '../bpe/encoder';
import { CharTokenizer } from '../char';
import { LLAMA2C_SPECIAL_TOKENS, Llama2cTokenizer } from '../llama2c/tokenizer';
import type { SpecialToken } from '../special-token';
import type { Tokenizer } from '../tokenizer';
import { utf8Encode } from '../utf8';
import { base64Decode } from './base64';
import { tokenizerFromHfJson } from './hf-json';
import {
  type JsonObject,
  jsonFail,
  parseJson,
  readArray,
  readChoice,
  readInteger,
  readNumber,
  readObject,
  readOptionalId,
  readString,
} from './json-read';

/** True when a parsed JSON value claims to be a Loom tokenizer. */
export function isLoomTokenizerJson(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && 'format' in value && value.format === 'loom-tokenizer'
  );
}

function readSpecialTokens(root: JsonObject, source: string): SpecialToken[] {
  return readArray(root.specialTokens, source, 'specialTokens').map((entry, index) => {
    const token = readObject(entry, source, `specialTokens[${index}]`);
    return {
      text: readString(token.text, source, `specialTokens[${index}].text`),
      id: readInteger(token.id, source, `specialTokens[${index}].id`),
    };
  });
}

function readCharJson(root: JsonObject, source: string): CharTokenizer {
  const characters = readArray(root.characters, source, 'characters').map((c, i) =>
    readString(c, source, `characters[${i}]`),
  );
  const specials = readSpecialTokens(root, source);
  specials.forEach((token, index) => {
    if (token.id !== characters.length + index) {
      jsonFail(
        source,
        `specialTokens[${index}].id`,
        `${characters.length + index} (special ids follow the characters in order)`,
        token.id,
      );
    }
  });
  const textOf = (key: 'bos' | 'eos'): string | undefined => {
    const id = readOptionalId(root[key], source, key);
    if (id === undefined) return undefined;
    const token = specials.find((special) => special.id === id);
    if (token === undefined) jsonFail(source, key, 'the id of a special token', id);
    return token.text;
  };
  return new CharTokenizer(characters, {
    unknown: readChoice(root.unknown, ['error', 'skip', 'unk'], source, 'unknown'),
    specialTokens: specials.map((token) => token.text),
    bos: textOf('bos'),
    eos: textOf('eos'),
    source,
  });
}

function readBpeJson(root: JsonObject, source: string): ByteLevelBpeTokenizer {
  readChoice(root.pattern, ['gpt2'], source, 'pattern');
  const tokens = readArray(root.tokens, source, 'tokens').map((entry, index) => {
    if (entry === null) return null;
    const text = readString(entry, source, `tokens[${index}]`);
    const bytes = unicodeToBytes(text);
    if (!(bytes instanceof Uint8Array))
      jsonFail(source, `tokens[${index}]`, "bytes in GPT-2's byte-to-unicode alphabet", text);
    return bytes;
  });
  const merging = readChoice(root.merging, ['ranks', 'merges'], source, 'merging');
  const merges =
    merging === 'ranks'
      ? undefined
      : readArray(root.merges, source, 'merges').map((entry, index): [number, number] => {
          const pair = readArray(entry, source, `merges[${index}]`);
          if (pair.length !== 2) jsonFail(source, `merges[${index}]`, 'a pair of ids [left, right]', entry);
          return [
            readInteger(pair[0], source, `merges[${index}][0]`),
            readInteger(pair[1], source, `merges[${index}][1]`),
          ];
        });
  return new ByteLevelBpeTokenizer({
    tokens,
    merging: merges === undefined ? { kind: 'ranks' } : { kind: 'merges', merges },
    specialTokens: readSpecialTokens(root, source),
    bos: readOptionalId(root.bos, source, 'bos'),
    eos: readOptionalId(root.eos, source, 'eos'),
    source,
  });
}

function readLlama2cJson(root: JsonObject, source: string): Llama2cTokenizer {
  const encoding = readChoice(root.pieceEncoding, ['utf8', 'base64'], source, 'pieceEncoding');
  const pieces = readArray(root.pieces, source, 'pieces').map((entry, index) => {
    const text = readString(entry, source, `pieces[${index}]`);
    if (encoding === 'utf8') return utf8Encode(text);
    const bytes = base64Decode(text);
    if (bytes === undefined) jsonFail(source, `pieces[${index}]`, 'base64', text);
    return bytes;
  });
  const scores = readArray(root.scores, source, 'scores').map((s, i) =>
    readNumber(s, source, `scores[${i}]`),
  );
  const specials = readSpecialTokens(root, source);
  const expected = JSON.stringify(LLAMA2C_SPECIAL_TOKENS);
  if (JSON.stringify(specials) !== expected) jsonFail(source, 'specialTokens', expected, specials);
  return new Llama2cTokenizer(
    {
      maxTokenLength: readInteger(root.maxTokenLength, source, 'maxTokenLength', 1),
      pieces,
      scores: Float32Array.from(scores),
    },
    source,
  );
}

/** Rebuilds a tokenizer from the JSON value (or text) that its `toJSON()` produced. */
export function tokenizerFromJSON(json: unknown, source = 'tokenizer JSON'): Tokenizer {
  const root = readObject(typeof json === 'string' ? parseJson(json, source) : json, source, '(root)');
  if (root.format !== 'loom-tokenizer') jsonFail(source, 'format', '"loom-tokenizer"', root.format);
  if (root.version !== 1) jsonFail(source, 'version', '1 (the only version this Loom reads)', root.version);
  const kind = readChoice(root.kind, ['char', 'bpe', 'llama2c', 'hf'], source, 'kind');
  switch (kind) {
    case 'char':
      return readCharJson(root, source);
    case 'bpe':
      return readBpeJson(root, source);
    case 'llama2c':
      return readLlama2cJson(root, source);
    case 'hf':
      return tokenizerFromHfJson(root.tokenizer, {
        source,
        bos: readOptionalId(root.bos, source, 'bos') ?? null,
        eos: readOptionalId(root.eos, source, 'eos') ?? null,
      });
  }
}
