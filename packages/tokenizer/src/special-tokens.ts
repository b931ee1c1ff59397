import type { SpecialToken } from './special-token';
import type { EncodeOptions } from './tokenizer';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The special tokens of one tokenizer, with the BOS/EOS roles and the splitting used by `specialTokens: 'parse'`. */
export class SpecialTokenSet {
  readonly list: readonly SpecialToken[];
  private readonly byText = new Map<string, number>();
  private readonly byId = new Map<number, string>();
  private readonly pattern: RegExp | undefined;

  /** `context` names the source in errors (`r50k_base.tiktoken`). */
  constructor(
    list: readonly SpecialToken[],
    readonly bos: number | undefined,
    readonly eos: number | undefined,
    context: string,
  ) {
    for (const token of list) {
      if (token.text === '')
        throw new Error(`${context}: special token ${token.id} has empty text; give it a name`);
      if (this.byText.has(token.text)) {
        throw new Error(`${context}: special token ${JSON.stringify(token.text)} is listed twice`);
      }
      if (this.byId.has(token.id)) {
        throw new Error(
          `${context}: special tokens ${JSON.stringify(this.byId.get(token.id))} and ` +
            `${JSON.stringify(token.text)} share id ${token.id}; give each its own id`,
        );
      }
      this.byText.set(token.text, token.id);
      this.byId.set(token.id, token.text);
    }
    for (const [role, id] of [
      ['bos', bos],
      ['eos', eos],
    ] as const) {
      if (id !== undefined && !this.byId.has(id)) {
        throw new Error(
          `${context}: ${role} id ${id} is not a special token; expected one of the special token ids`,
        );
      }
    }
    this.list = [...list].sort((a, b) => a.id - b.id);
    const texts = [...this.byText.keys()].sort((a, b) => b.length - a.length);
    this.pattern = texts.length > 0 ? new RegExp(texts.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  id(text: string): number | undefined {
    return this.byText.get(text);
  }

  text(id: number): string | undefined {
    return this.byId.get(id);
  }

  /** The largest special id, or -1 when there are none. */
  maxId(): number {
    let max = -1;
    for (const token of this.list) max = Math.max(max, token.id);
    return max;
  }

  /**
   * Applies `options` around `encodeText`: BOS/EOS, and with `specialTokens: 'parse'` splits `text` at special-token
   * text (longest match first), calling `encodeText` for each non-empty stretch between them.
   */
  encode(
    text: string,
    options: EncodeOptions,
    out: number[],
    encodeText: (text: string, out: number[]) => void,
  ): number[] {
    if (options.bos) out.push(this.require('bos', this.bos));
    if (options.specialTokens === 'parse' && this.pattern) {
      let start = 0;
      for (const match of text.matchAll(this.pattern)) {
        if (match.index > start) encodeText(text.slice(start, match.index), out);
        out.push(this.byText.get(match[0])!);
        start = match.index + match[0].length;
      }
      if (start < text.length) encodeText(start === 0 ? text : text.slice(start), out);
    } else if (text.length > 0) {
      encodeText(text, out);
    }
    if (options.eos) out.push(this.require('eos', this.eos));
    return out;
  }

  private require(role: 'bos' | 'eos', id: number | undefined): number {
    if (id === undefined) {
      throw new Error(
        `encode: ${role}: true was requested but this tokenizer has no ${role.toUpperCase()} token`,
      );
    }
    return id;
  }
}
