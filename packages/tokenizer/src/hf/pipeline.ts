import type { HfTokenizerJson } from '../formats/tokenizer-json';
import { checkId } from '../ids';
import type { SpecialToken } from '../special-token';
import type { EncodeOptions, Tokenizer } from '../tokenizer';
import { utf8Decode } from '../utf8';
import { type AddedTokenJson, AddedTokenMatcher, type Section } from './added-tokens';
import { byteString, type Decode } from './decoders';
import type { HfModel } from './models/model';
import type { Normalize } from './normalizers';
import type { PostProcess } from './post-processors';
import type { PreTokenize } from './pre-tokenizers';

/** The compiled parts of a tokenizer.json. */
export interface HfPipelineSpec {
  /** The parsed tokenizer.json, kept for `toJSON`. */
  readonly json: unknown;
  readonly normalize: Normalize | undefined;
  readonly preTokenize: PreTokenize | undefined;
  readonly model: HfModel;
  readonly postProcess: PostProcess | undefined;
  readonly decode: Decode | undefined;
  readonly added: readonly AddedTokenJson[];
  readonly bos: number | undefined;
  readonly eos: number | undefined;
}

/**
 * A Hugging Face `tokenizer.json` run as the Rust `tokenizers` crate runs it: added tokens are cut out of the
 * text, each stretch between them is normalized, pre-tokenized and tokenized by the model; `decode` maps ids to
 * token texts and runs the decoders. With `specialTokens: 'text'` (the default) special added tokens are left as
 * text, as `split_special_tokens=True` does; added tokens that are not special are always recognised.
 */
export class HfTokenizer implements Tokenizer {
  readonly kind = 'hf';
  readonly vocabSize: number;
  readonly specialTokens: readonly SpecialToken[];
  readonly bos: number | undefined;
  readonly eos: number | undefined;
  /** Token text by id (`undefined` for an id the file leaves unused). */
  private readonly tokens: (string | undefined)[];
  private readonly added = new Map<string, number>();
  private readonly special = new Map<string, number>();
  /** Raw-text matchers: every added token, and those that are not special. */
  private readonly rawAll: AddedTokenMatcher;
  private readonly rawPlain: AddedTokenMatcher;
  /** Normalized-text matchers, likewise. */
  private readonly normalizedAll: AddedTokenMatcher;
  private readonly normalizedPlain: AddedTokenMatcher;

  constructor(
    private readonly spec: HfPipelineSpec,
    private readonly source: string,
  ) {
    const { model, added, normalize } = spec;
    let size = 0;
    for (const id of model.vocab.values()) size = Math.max(size, id + 1);
    for (const token of added) size = Math.max(size, token.id + 1);
    this.vocabSize = size;
    this.tokens = new Array(size);
    for (const [text, id] of model.vocab) this.tokens[id] = text;
    for (const token of added) {
      this.tokens[token.id] = token.content;
      this.added.set(token.content, token.id);
      if (token.special) this.special.set(token.content, token.id);
    }
    this.specialTokens = added
      .filter((token) => token.special)
      .map(({ content, id }) => ({ text: content, id }))
      .sort((a, b) => a.id - b.id);
    const matcher = (normalized: boolean, withSpecial: boolean) =>
      new AddedTokenMatcher(
        added
          .filter((token) => token.normalized === normalized && (withSpecial || !token.special))
          .map(
            (token) => [normalized && normalize ? normalize(token.content) : token.content, token] as const,
          ),
      );
    this.rawAll = matcher(false, true);
    this.rawPlain = matcher(false, false);
    this.normalizedAll = matcher(true, true);
    this.normalizedPlain = matcher(true, false);
    for (const [role, id] of [
      ['bos', spec.bos],
      ['eos', spec.eos],
    ] as const) {
      if (id !== undefined) checkId(id, size, `${source}: ${role}`);
    }
    this.bos = spec.bos;
    this.eos = spec.eos;
  }

  specialTokenId(text: string): number | undefined {
    return this.special.get(text);
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const parse = options.specialTokens === 'parse';
    const raw = (parse ? this.rawAll : this.rawPlain).split(text);
    let ids: number[] = [];
    raw.forEach((section, index) => {
      if ('id' in section) {
        ids.push(section.id);
        return;
      }
      const normalized = this.spec.normalize ? this.spec.normalize(section.text) : section.text;
      const parts: Section[] = (parse ? this.normalizedAll : this.normalizedPlain).split(normalized);
      parts.forEach((part, k) => {
        if ('id' in part) ids.push(part.id);
        else this.encodePart(part.text, index === 0 && k === 0, ids);
      });
    });
    if (options.addSpecialTokens && this.spec.postProcess) ids = this.spec.postProcess(ids);
    if (options.bos) ids.unshift(this.require('bos', this.bos));
    if (options.eos) ids.push(this.require('eos', this.eos));
    return ids;
  }

  decode(ids: ArrayLike<number>): string {
    return utf8Decode(this.decodeBytes(ids));
  }

  /** With `previous`, the bytes that `ids` add after it (decoders such as Strip treat the first token apart). */
  decodeBytes(ids: ArrayLike<number>, previous?: number): Uint8Array {
    if (previous === undefined) return this.bytesOf(Array.from(ids));
    const before = this.bytesOf([previous]);
    const after = this.bytesOf([previous, ...Array.from(ids)]);
    const isPrefix = before.every((byte, i) => after[i] === byte);
    return isPrefix ? after.subarray(before.length) : this.bytesOf(Array.from(ids));
  }

  tokenToId(token: string): number | undefined {
    return this.added.get(token) ?? this.spec.model.vocab.get(token);
  }

  idToToken(id: number): string {
    checkId(id, this.vocabSize, 'idToToken');
    return this.tokens[id] ?? '';
  }

  toJSON(): HfTokenizerJson {
    return {
      format: 'loom-tokenizer',
      version: 1,
      kind: 'hf',
      tokenizer: this.spec.json,
      specialTokens: this.specialTokens.map(({ text, id }) => ({ text, id })),
      bos: this.bos ?? null,
      eos: this.eos ?? null,
    };
  }

  private encodePart(text: string, atStart: boolean, out: number[]): void {
    const pieces = this.spec.preTokenize ? this.spec.preTokenize([text], atStart) : [text];
    for (const piece of pieces) this.spec.model.tokenize(piece, out);
  }

  private bytesOf(ids: readonly number[]): Uint8Array {
    const texts: string[] = [];
    for (const id of ids) {
      checkId(id, this.vocabSize, 'decode');
      const token = this.tokens[id];
      // Ids the file leaves unused decode to nothing, as in Hugging Face tokenizers.
      if (token !== undefined) texts.push(byteString(token));
    }
    const joined = this.spec.decode ? this.spec.decode(texts).join('') : texts.join(' ');
    return Uint8Array.from(joined, (char) => char.charCodeAt(0));
  }

  private require(role: 'bos' | 'eos', id: number | undefined): number {
    if (id === undefined) {
      throw new Error(
        `encode: ${role}: true was requested but ${this.source} has no ${role.toUpperCase()} token; ` +
          `give its tokenizer_config.json (${role}_token) or use addSpecialTokens`,
      );
    }
    return id;
  }
}
