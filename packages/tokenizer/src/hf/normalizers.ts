import { readArray, readBoolean, readObject, readString } from '../formats/json-read';
import { readType } from './component-type';
import { type PatternJson, readPattern } from './regex';

/** The `normalizer` shapes of tokenizer.json that Loom implements. */
export type NormalizerJson =
  | { readonly type: 'NFC' | 'NFD' | 'NFKC' | 'NFKD' | 'Lowercase' }
  | { readonly type: 'Strip'; readonly strip_left?: boolean; readonly strip_right?: boolean }
  | { readonly type: 'Replace'; readonly pattern: PatternJson; readonly content: string }
  | { readonly type: 'Prepend'; readonly prepend: string }
  | { readonly type: 'Sequence'; readonly normalizers: readonly NormalizerJson[] };

/** Rewrites a stretch of input text before pre-tokenisation. */
export type Normalize = (text: string) => string;

const TYPES = [
  'NFC',
  'NFD',
  'NFKC',
  'NFKD',
  'Lowercase',
  'Strip',
  'Replace',
  'Prepend',
  'Sequence',
] as const satisfies readonly NormalizerJson['type'][];

const LEADING_SPACE = /^\p{White_Space}+/u;
const TRAILING_SPACE = /\p{White_Space}+$/u;

/** Compiles the normalizer at `path` (such as `normalizer.normalizers[1]`). */
export function compileNormalizer(value: unknown, source: string, path: string): Normalize {
  const json = readObject(value, source, path);
  const type = readType(json, TYPES, source, path);
  switch (type) {
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD':
      return (text) => text.normalize(type);
    case 'Lowercase':
      return (text) => text.toLowerCase();
    case 'Strip': {
      const left = readBoolean(json.strip_left, source, `${path}.strip_left`, true);
      const right = readBoolean(json.strip_right, source, `${path}.strip_right`, true);
      return (text) => {
        const stripped = left ? text.replace(LEADING_SPACE, '') : text;
        return right ? stripped.replace(TRAILING_SPACE, '') : stripped;
      };
    }
    case 'Replace': {
      const pattern = readPattern(json.pattern, source, `${path}.pattern`);
      const content = readString(json.content, source, `${path}.content`);
      return (text) => text.replace(pattern, () => content);
    }
    case 'Prepend': {
      const prepend = readString(json.prepend, source, `${path}.prepend`);
      return (text) => (text === '' ? text : prepend + text);
    }
    case 'Sequence': {
      const steps = readArray(json.normalizers, source, `${path}.normalizers`).map((step, index) =>
        compileNormalizer(step, source, `${path}.normalizers[${index}]`),
      );
      return (text) => steps.reduce((current, step) => step(current), text);
    }
  }
}
