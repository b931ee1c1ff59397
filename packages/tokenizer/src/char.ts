import type { CharTokenizerJson, UnknownCharPolicy } from './formats/tokenizer-json';
import { checkId } from './ids';
import { SpecialTokenBase } from './special-token-base';
import { SpecialTokenSet } from './special-tokens';
import type { Tokenizer } from './tokenizer';
import { utf8Encode } from './utf8';

const UNK_TEXT = '<unk>';

export interface CharTokenizerOptions {
  readonly unknown?: UnknownCharPolicy;
  /** Special tokens, given ids after the characters in this order. */
  readonly specialTokens?: readonly string[];
  /** Text of the special token that is BOS (it must be in `specialTokens`). */
  readonly bos?: string;
  readonly eos?: string;
  /** Names the vocabulary in error messages (a file, when loaded from one). Default `'CharTokenizer'`. */
  readonly source?: string;
}

const REPLACEMENT = 0xfffd;

/** Code point at `i`, with a lone surrogate read as U+FFFD (the rule byte-level tokenizers follow too). */
function codePointAt(text: string, i: number): number {
  const codePoint = text.codePointAt(i)!;
  return codePoint >= 0xd800 && codePoint <= 0xdfff ? REPLACEMENT : codePoint;
}

function width(text: string, i: number): number {
  return text.codePointAt(i)! > 0xffff ? 2 : 1;
}

/**
 * Character-level tokenizer: one id per Unicode code point seen in a corpus (sorted by code point, so the same
 * corpus always gives the same ids), then the special tokens. Lone surrogates count as U+FFFD.
 */
export class CharTokenizer extends SpecialTokenBase implements Tokenizer {
  readonly kind = 'char';
  readonly vocabSize: number;
  readonly unknown: UnknownCharPolicy;
  private readonly characters: readonly string[];
  protected readonly specials: SpecialTokenSet;
  private readonly texts: string[];
  private readonly bmpIds = new Int32Array(0x10000).fill(-1);
  private readonly astralIds = new Map<number, number>();
  private readonly unkId: number;

  /** A tokenizer whose vocabulary is every distinct character of `corpus`. */
  static fromCorpus(corpus: string, options: CharTokenizerOptions = {}): CharTokenizer {
    const seen = new Set<number>();
    for (let i = 0; i < corpus.length; i += width(corpus, i)) seen.add(codePointAt(corpus, i));
    const characters = [...seen].sort((a, b) => a - b).map((codePoint) => String.fromCodePoint(codePoint));
    return new CharTokenizer(characters, options);
  }

  constructor(characters: readonly string[], options: CharTokenizerOptions = {}) {
    super();
    this.unknown = options.unknown ?? 'error';
    this.characters = characters;
    const source = options.source ?? 'CharTokenizer';
    characters.forEach((char, id) => {
      const codePoint = char.codePointAt(0);
      if (
        codePoint === undefined ||
        char.length !== width(char, 0) ||
        (codePoint >= 0xd800 && codePoint <= 0xdfff)
      ) {
        throw new Error(
          `${source}: vocabulary entry ${id} is ${JSON.stringify(char)}; expected exactly one Unicode character`,
        );
      }
      if (this.idOfCodePoint(codePoint) >= 0) {
        throw new Error(
          `${source}: character ${JSON.stringify(char)} is listed twice (ids ${this.idOfCodePoint(codePoint)} and ${id})`,
        );
      }
      if (codePoint > 0xffff) this.astralIds.set(codePoint, id);
      else this.bmpIds[codePoint] = id;
    });
    const specialTexts = [...(options.specialTokens ?? [])];
    if (this.unknown === 'unk' && !specialTexts.includes(UNK_TEXT)) specialTexts.push(UNK_TEXT);
    const specialTokens = specialTexts.map((text, index) => ({ text, id: characters.length + index }));
    const roleId = (role: 'bos' | 'eos', text: string | undefined): number | undefined => {
      if (text === undefined) return undefined;
      const token = specialTokens.find((special) => special.text === text);
      if (token === undefined) {
        throw new Error(
          `${source}: ${role} ${JSON.stringify(text)} is not one of the special tokens; add it to specialTokens`,
        );
      }
      return token.id;
    };
    this.specials = new SpecialTokenSet(
      specialTokens,
      roleId('bos', options.bos),
      roleId('eos', options.eos),
      source,
    );
    this.vocabSize = characters.length + specialTokens.length;
    this.texts = [...characters, ...specialTexts];
    this.unkId = this.unknown === 'unk' ? this.specials.id(UNK_TEXT)! : -1;
  }

  decode(ids: ArrayLike<number>): string {
    let text = '';
    for (let i = 0; i < ids.length; i++) {
      checkId(ids[i], this.vocabSize, 'decode');
      text += this.texts[ids[i]];
    }
    return text;
  }

  decodeBytes(ids: ArrayLike<number>): Uint8Array {
    return utf8Encode(this.decode(ids));
  }

  tokenToId(token: string): number | undefined {
    const special = this.specials.id(token);
    if (special !== undefined) return special;
    if (token.length === 0 || token.length !== width(token, 0)) return undefined;
    const id = this.idOfCodePoint(token.codePointAt(0)!);
    return id < 0 ? undefined : id;
  }

  idToToken(id: number): string {
    checkId(id, this.vocabSize, 'idToToken');
    return this.texts[id];
  }

  toJSON(): CharTokenizerJson {
    return {
      format: 'loom-tokenizer',
      version: 1,
      kind: 'char',
      characters: [...this.characters],
      unknown: this.unknown,
      specialTokens: this.specials.list.map(({ text, id }) => ({ text, id })),
      bos: this.bos ?? null,
      eos: this.eos ?? null,
    };
  }

  private idOfCodePoint(codePoint: number): number {
    return codePoint > 0xffff ? (this.astralIds.get(codePoint) ?? -1) : this.bmpIds[codePoint];
  }

  protected encodeText(text: string, out: number[]): void {
    for (let i = 0; i < text.length; ) {
      const unit = text.charCodeAt(i);
      if (unit < 0xd800 || unit > 0xdfff) {
        const id = this.bmpIds[unit];
        if (id >= 0) {
          out.push(id);
          i++;
          continue;
        }
      }
      const codePoint = codePointAt(text, i);
      const id = this.idOfCodePoint(codePoint);
      if (id >= 0) out.push(id);
      else if (this.unknown === 'unk') out.push(this.unkId);
      else if (this.unknown === 'error') {
        const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
        throw new Error(
          `encode: character ${JSON.stringify(String.fromCodePoint(codePoint))} (U+${hex}) at index ${i} is not in this ` +
            `character vocabulary of ${this.characters.length}; build the tokenizer from a corpus that contains it, or use unknown: 'skip' or 'unk'`,
        );
      }
      i += width(text, i);
    }
  }
}
