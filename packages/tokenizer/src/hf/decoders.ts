import { unicodeToBytes } from '../bpe/byte-unicode';
import {
  jsonFail,
  readArray,
  readBoolean,
  readChoice,
  readInteger,
  readObject,
  readString,
} from '../formats/json-read';
import { bytesKey, utf8Decode, utf8Encode } from '../utf8';
import { readType } from './component-type';
import { type PatternJson, readPattern } from './regex';

/** The `decoder` shapes of tokenizer.json that Loom implements. */
export type DecoderJson =
  | { readonly type: 'ByteLevel' | 'ByteFallback' | 'Fuse' }
  | { readonly type: 'Strip'; readonly content: string; readonly start: number; readonly stop: number }
  | { readonly type: 'Replace'; readonly pattern: PatternJson; readonly content: string }
  | { readonly type: 'WordPiece'; readonly prefix?: string; readonly cleanup?: boolean }
  | {
      readonly type: 'Metaspace';
      readonly replacement?: string;
      readonly prepend_scheme?: 'always' | 'first' | 'never';
      readonly add_prefix_space?: boolean;
    }
  | { readonly type: 'Sequence'; readonly decoders: readonly DecoderJson[] };

/**
 * Rewrites the list of token texts on the way back to text. Texts are byte strings (one char per UTF-8 byte, as
 * {@link bytesKey} writes them), so byte-level and byte-fallback tokens stay exact bytes until the end.
 */
export type Decode = (tokens: string[]) => string[];

const TYPES = [
  'ByteLevel',
  'ByteFallback',
  'Fuse',
  'Strip',
  'Replace',
  'WordPiece',
  'Metaspace',
  'Sequence',
] as const satisfies readonly DecoderJson['type'][];

/** A byte string of the UTF-8 bytes of `text`. */
export function byteString(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII text is its own byte string.
  return /^[\x00-\x7f]*$/.test(text) ? text : bytesKey(utf8Encode(text));
}

/** Text of a byte string (invalid UTF-8 becomes U+FFFD). */
function textOf(bytes: string): string {
  return utf8Decode(Uint8Array.from(bytes, (char) => char.charCodeAt(0)));
}

const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

/** BERT's clean-up of spaces before punctuation and contractions. */
function cleanUp(text: string): string {
  return text
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(' do not', " don't")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}

function strip(token: string, content: string, start: number, stop: number): string {
  let from = 0;
  for (let k = 0; k < start && token.startsWith(content, from); k++) from += content.length;
  let to = token.length;
  for (let k = 0; k < stop && to - content.length >= from && token.endsWith(content, to); k++)
    to -= content.length;
  return token.slice(from, to);
}

/** Compiles the decoder at `path`. */
export function compileDecoder(value: unknown, source: string, path: string): Decode {
  const json = readObject(value, source, path);
  const type = readType(json, TYPES, source, path);
  switch (type) {
    case 'ByteLevel':
      return (tokens) => [
        tokens
          .map((token) => {
            const bytes = unicodeToBytes(textOf(token));
            return bytes instanceof Uint8Array ? bytesKey(bytes) : token;
          })
          .join(''),
      ];
    case 'ByteFallback':
      return (tokens) =>
        tokens.map((token) => {
          const byte = BYTE_TOKEN.exec(token);
          return byte === null ? token : String.fromCharCode(Number.parseInt(byte[1], 16));
        });
    case 'Fuse':
      return (tokens) => [tokens.join('')];
    case 'Strip': {
      const content = byteString(readString(json.content, source, `${path}.content`));
      const start = readInteger(json.start, source, `${path}.start`);
      const stop = readInteger(json.stop, source, `${path}.stop`);
      return (tokens) => tokens.map((token) => strip(token, content, start, stop));
    }
    case 'Replace': {
      const pattern = readObject(json.pattern, source, `${path}.pattern`);
      const content = readString(json.content, source, `${path}.content`);
      if (typeof pattern.String === 'string') {
        const from = byteString(pattern.String);
        const to = byteString(content);
        return (tokens) => tokens.map((token) => token.replaceAll(from, to));
      }
      const regex = readPattern(pattern, source, `${path}.pattern`);
      return (tokens) => tokens.map((token) => byteString(textOf(token).replace(regex, () => content)));
    }
    case 'WordPiece': {
      const prefix = byteString(readString(json.prefix ?? '##', source, `${path}.prefix`));
      const cleanup = readBoolean(json.cleanup, source, `${path}.cleanup`, true);
      return (tokens) =>
        tokens.map((token, index) => {
          const joined =
            index === 0 ? token : token.startsWith(prefix) ? token.slice(prefix.length) : ` ${token}`;
          return cleanup ? cleanUp(joined) : joined;
        });
    }
    case 'Metaspace': {
      const replacement = readString(json.replacement ?? '▁', source, `${path}.replacement`);
      if ([...replacement].length !== 1)
        jsonFail(source, `${path}.replacement`, 'one character', replacement);
      const legacy = readBoolean(json.add_prefix_space, source, `${path}.add_prefix_space`, true);
      const scheme =
        json.prepend_scheme === undefined
          ? legacy
            ? 'always'
            : 'never'
          : readChoice(json.prepend_scheme, ['always', 'first', 'never'], source, `${path}.prepend_scheme`);
      const marker = byteString(replacement);
      // The first token's replacement characters were added by the pre-tokenizer: they are dropped.
      return (tokens) =>
        tokens.map((token, index) => token.replaceAll(marker, index === 0 && scheme !== 'never' ? '' : ' '));
    }
    case 'Sequence': {
      const steps = readArray(json.decoders, source, `${path}.decoders`).map((step, index) =>
        compileDecoder(step, source, `${path}.decoders[${index}]`),
      );
      return (tokens) => steps.reduce((current, step) => step(current), tokens);
    }
  }
}
