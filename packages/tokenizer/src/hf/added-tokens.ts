import { readArray, readBoolean, readInteger, readObject, readString } from '../formats/json-read';

/** One entry of tokenizer.json's `added_tokens`. */
export interface AddedTokenJson {
  readonly id: number;
  readonly content: string;
  /** Special tokens are control tokens: `specialTokens: 'text'` leaves their text alone. */
  readonly special: boolean;
  /** Match only where the text around is not a letter or digit. */
  readonly single_word: boolean;
  /** Swallow the white space before (`lstrip`) or after (`rstrip`) the match. */
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  /** Match in the normalized text (with the content normalized too) rather than the raw text. */
  readonly normalized: boolean;
}

/** A stretch of input: plain text for the normalizer and model, or an added token. */
export type Section = { readonly text: string } | { readonly id: number };

/** Reads `added_tokens`; ids must be at most `maxId`. */
export function readAddedTokens(value: unknown, source: string, maxId: number): AddedTokenJson[] {
  if (value === undefined || value === null) return [];
  return readArray(value, source, 'added_tokens').map((entry, index) => {
    const path = `added_tokens[${index}]`;
    const json = readObject(entry, source, path);
    const flag = (key: string): boolean => readBoolean(json[key], source, `${path}.${key}`, false);
    const content = readString(json.content, source, `${path}.content`);
    if (content === '')
      throw new Error(`${source}: key "${path}.content": an added token needs text; got ""`);
    return {
      id: readInteger(json.id, source, `${path}.id`, 0, maxId),
      content,
      special: flag('special'),
      single_word: flag('single_word'),
      lstrip: flag('lstrip'),
      rstrip: flag('rstrip'),
      normalized: flag('normalized'),
    };
  });
}

const WORD_CHAR = /[\p{Alphabetic}\p{N}]/u;
const SPACE_CHAR = /\p{White_Space}/u;

/**
 * Finds added tokens in text, leftmost and then longest first (as a trie or Aho-Corasick leftmost-longest
 * search does), applying each token's `single_word`, `lstrip` and `rstrip`.
 */
export class AddedTokenMatcher {
  private readonly byText = new Map<string, AddedTokenJson>();
  /** For each first UTF-16 code unit: the lengths of the tokens that start with it, longest first. */
  private readonly lengths = new Map<number, number[]>();

  /** `texts` are the strings to find, each with its token (the content, or the normalized content). */
  constructor(entries: readonly (readonly [string, AddedTokenJson])[]) {
    for (const [text, token] of entries) {
      if (text === '' || this.byText.has(text)) continue;
      this.byText.set(text, token);
      const first = text.charCodeAt(0);
      const lengths = this.lengths.get(first) ?? [];
      if (!lengths.includes(text.length)) lengths.push(text.length);
      this.lengths.set(
        first,
        lengths.sort((a, b) => b - a),
      );
    }
  }

  /** Cuts `text` into sections; empty text sections are left out. */
  split(text: string): Section[] {
    if (this.byText.size === 0) return text === '' ? [] : [{ text }];
    const sections: Section[] = [];
    let done = 0;
    for (let i = 0; i < text.length; ) {
      const match = this.matchAt(text, i);
      if (match === undefined) {
        i++;
        continue;
      }
      const [token, length] = match;
      let start = i;
      let end = i + length;
      i = end;
      if (
        token.single_word &&
        ((start > 0 && WORD_CHAR.test(charBefore(text, start))) ||
          (end < text.length && WORD_CHAR.test(charAt(text, end))))
      ) {
        continue;
      }
      if (token.lstrip) {
        while (start > done && SPACE_CHAR.test(charBefore(text, start)))
          start -= charBefore(text, start).length;
      }
      if (token.rstrip) {
        while (end < text.length && SPACE_CHAR.test(charAt(text, end))) end += charAt(text, end).length;
      }
      if (start > done) sections.push({ text: text.slice(done, start) });
      sections.push({ id: token.id });
      done = i = end;
    }
    if (done < text.length) sections.push({ text: done === 0 ? text : text.slice(done) });
    return sections;
  }

  private matchAt(text: string, at: number): [AddedTokenJson, number] | undefined {
    const lengths = this.lengths.get(text.charCodeAt(at));
    if (lengths === undefined) return undefined;
    for (const length of lengths) {
      const token = at + length <= text.length ? this.byText.get(text.slice(at, at + length)) : undefined;
      if (token !== undefined) return [token, length];
    }
    return undefined;
  }
}

function charAt(text: string, index: number): string {
  return String.fromCodePoint(text.codePointAt(index)!);
}

function charBefore(text: string, index: number): string {
  const low = text.charCodeAt(index - 1);
  const pair = low >= 0xdc00 && low <= 0xdfff && index >= 2;
  return pair ? text.slice(index - 2, index) : text[index - 1];
}
