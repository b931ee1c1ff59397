import {
  jsonFail,
  readArray,
  readBoolean,
  readChoice,
  readObject,
  readString,
} from '../../formats/json-read';
import { readType } from '../component-type';
import { type PatternJson, readPattern } from '../regex';
import { byteLevelSplit } from './byte-level';
import {
  bertSplit,
  delimiterSplitter,
  digitsSplit,
  punctuationSplit,
  spaceSplit,
  whitespaceSplit,
} from './char-class';
import { metaspaceSplitter, type PrependScheme } from './metaspace';
import { SPLIT_BEHAVIORS, type SplitBehavior, splitPiece } from './split';

/** The `pre_tokenizer` shapes of tokenizer.json that Loom implements. */
export type PreTokenizerJson =
  | {
      readonly type: 'ByteLevel';
      readonly add_prefix_space?: boolean;
      readonly use_regex?: boolean;
      readonly trim_offsets?: boolean;
    }
  | {
      readonly type: 'Split';
      readonly pattern: PatternJson;
      readonly behavior: SplitBehavior;
      readonly invert?: boolean;
    }
  | {
      readonly type: 'Metaspace';
      readonly replacement?: string;
      readonly prepend_scheme?: PrependScheme;
      /** Older files: true means `prepend_scheme: "always"`, false `"never"`. */
      readonly add_prefix_space?: boolean;
      readonly split?: boolean;
    }
  | { readonly type: 'Digits'; readonly individual_digits?: boolean }
  | { readonly type: 'Punctuation'; readonly behavior?: SplitBehavior }
  | { readonly type: 'CharDelimiterSplit'; readonly delimiter: string }
  | { readonly type: 'Whitespace' | 'WhitespaceSplit' | 'BertPreTokenizer' }
  | { readonly type: 'Sequence'; readonly pretokenizers: readonly PreTokenizerJson[] };

/**
 * Splits pieces into smaller pieces. `atStart` says the first piece begins the input text (Metaspace's
 * `prepend_scheme: "first"` prepends only there).
 */
export type PreTokenize = (pieces: readonly string[], atStart: boolean) => string[];

const TYPES = [
  'ByteLevel',
  'Split',
  'Metaspace',
  'Digits',
  'Punctuation',
  'CharDelimiterSplit',
  'Whitespace',
  'WhitespaceSplit',
  'BertPreTokenizer',
  'Sequence',
] as const satisfies readonly PreTokenizerJson['type'][];

/** A pre-tokenizer that splits each piece on its own. */
const each =
  (split: (piece: string) => string[]): PreTokenize =>
  (pieces) =>
    pieces.flatMap(split);

function compileMetaspace(
  json: { readonly [key: string]: unknown },
  source: string,
  path: string,
): PreTokenize {
  const replacement = readString(json.replacement ?? '▁', source, `${path}.replacement`);
  if ([...replacement].length !== 1) jsonFail(source, `${path}.replacement`, 'one character', replacement);
  const legacy = readBoolean(json.add_prefix_space, source, `${path}.add_prefix_space`, true);
  const prependScheme =
    json.prepend_scheme === undefined
      ? legacy
        ? 'always'
        : 'never'
      : readChoice(json.prepend_scheme, ['always', 'first', 'never'], source, `${path}.prepend_scheme`);
  const split = metaspaceSplitter({
    replacement,
    prependScheme,
    split: readBoolean(json.split, source, `${path}.split`, true),
  });
  return (pieces, atStart) => pieces.flatMap((piece, index) => split(piece, atStart && index === 0));
}

/** Compiles the pre-tokenizer at `path` (such as `pre_tokenizer.pretokenizers[0]`). */
export function compilePreTokenizer(value: unknown, source: string, path: string): PreTokenize {
  const json = readObject(value, source, path);
  const type = readType(json, TYPES, source, path);
  switch (type) {
    case 'ByteLevel': {
      const options = {
        addPrefixSpace: readBoolean(json.add_prefix_space, source, `${path}.add_prefix_space`, true),
        useRegex: readBoolean(json.use_regex, source, `${path}.use_regex`, true),
      };
      return each((piece) => byteLevelSplit(piece, options));
    }
    case 'Split': {
      const pattern = readPattern(json.pattern, source, `${path}.pattern`);
      const behavior = readChoice(json.behavior, SPLIT_BEHAVIORS, source, `${path}.behavior`);
      const invert = readBoolean(json.invert, source, `${path}.invert`, false);
      return each((piece) => splitPiece(piece, pattern, behavior, invert));
    }
    case 'Metaspace':
      return compileMetaspace(json, source, path);
    case 'Digits': {
      const individual = readBoolean(json.individual_digits, source, `${path}.individual_digits`, false);
      return each((piece) => digitsSplit(piece, individual));
    }
    case 'Punctuation': {
      const behavior =
        json.behavior === undefined
          ? 'Isolated'
          : readChoice(json.behavior, SPLIT_BEHAVIORS, source, `${path}.behavior`);
      return each((piece) => punctuationSplit(piece, behavior));
    }
    case 'CharDelimiterSplit': {
      const delimiter = readString(json.delimiter, source, `${path}.delimiter`);
      if ([...delimiter].length !== 1) jsonFail(source, `${path}.delimiter`, 'one character', delimiter);
      return each(delimiterSplitter(delimiter));
    }
    case 'Whitespace':
      return each(whitespaceSplit);
    case 'WhitespaceSplit':
      return each(spaceSplit);
    case 'BertPreTokenizer':
      return each(bertSplit);
    case 'Sequence': {
      const steps = readArray(json.pretokenizers, source, `${path}.pretokenizers`).map((step, index) =>
        compilePreTokenizer(step, source, `${path}.pretokenizers[${index}]`),
      );
      return (pieces, atStart) => steps.reduce((current, step) => step(current, atStart), [...pieces]);
    }
  }
}
