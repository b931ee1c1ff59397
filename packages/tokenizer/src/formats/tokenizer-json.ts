/** The JSON forms of Loom's tokenizers, as their `toJSON()` writes them and `tokenizerFromJSON` reads them. */

import type { SpecialToken } from '../special-token';

/**
 * What `encode` does with a character that is not in the vocabulary:
 * - `'error'` (default): throw, naming the character and where it is;
 * - `'skip'`: leave it out;
 * - `'unk'`: encode it as the `<unk>` special token (added to the vocabulary).
 */
export type UnknownCharPolicy = 'error' | 'skip' | 'unk';

/** Fields every Loom tokenizer JSON has. */
interface LoomJsonBase {
  readonly format: 'loom-tokenizer';
  readonly version: 1;
  readonly specialTokens: readonly SpecialToken[];
  readonly bos: number | null;
  readonly eos: number | null;
}

export interface CharTokenizerJson extends LoomJsonBase {
  readonly kind: 'char';
  /** One Unicode character per id. */
  readonly characters: readonly string[];
  readonly unknown: UnknownCharPolicy;
}

interface BpeJsonBase extends LoomJsonBase {
  readonly kind: 'bpe';
  /** The pre-tokenisation pattern; only GPT-2's exists today. */
  readonly pattern: 'gpt2';
  /** Bytes of each id in GPT-2's byte-to-unicode alphabet; null where a special token holds the id. */
  readonly tokens: readonly (string | null)[];
}

/** See `BpeMerging` for what `ranks` and `merges` mean. */
export type BpeTokenizerJson =
  | (BpeJsonBase & { readonly merging: 'ranks' })
  | (BpeJsonBase & { readonly merging: 'merges'; readonly merges: readonly (readonly [number, number])[] });

export interface Llama2cTokenizerJson extends LoomJsonBase {
  readonly kind: 'llama2c';
  readonly maxTokenLength: number;
  /** `utf8`: pieces are plain strings; `base64`: used when some piece is not valid UTF-8. */
  readonly pieceEncoding: 'utf8' | 'base64';
  readonly pieces: readonly string[];
  readonly scores: readonly number[];
}

export interface HfTokenizerJson extends LoomJsonBase {
  readonly kind: 'hf';
  /** The Hugging Face tokenizer.json it was loaded from, as parsed. */
  readonly tokenizer: unknown;
}

export type LoomTokenizerJson = CharTokenizerJson | BpeTokenizerJson | Llama2cTokenizerJson | HfTokenizerJson;
