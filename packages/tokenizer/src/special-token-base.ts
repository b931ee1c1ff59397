import type { SpecialToken } from './special-token';
import type { SpecialTokenSet } from './special-tokens';
import type { EncodeOptions } from './tokenizer';

/**
 * What every tokenizer does the same way: BOS, EOS and the special tokens come from its
 * `SpecialTokenSet`, and `encode` lets the set cut out special-token text (when asked) and
 * hands the plain parts to `encodeText`.
 */
export abstract class SpecialTokenBase {
  protected abstract readonly specials: SpecialTokenSet;

  /** Encodes text without special tokens, appending ids to `out`. */
  protected abstract encodeText(text: string, out: number[]): void;

  get bos(): number | undefined {
    return this.specials.bos;
  }

  get eos(): number | undefined {
    return this.specials.eos;
  }

  get specialTokens(): readonly SpecialToken[] {
    return this.specials.list;
  }

  specialTokenId(text: string): number | undefined {
    return this.specials.id(text);
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    return this.specials.encode(text, options, [], (part, out) => this.encodeText(part, out));
  }
}
