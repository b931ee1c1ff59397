import type { LoomTokenizerJson } from './formats/tokenizer-json';
import type { SpecialToken } from './special-token';

/** The tokenizer families Loom implements (`hf`: a Hugging Face tokenizer.json pipeline). */
export type TokenizerKind = 'char' | 'bpe' | 'llama2c' | 'hf';

/**
 * What `encode` does with special-token text (such as `<|endoftext|>`) found in its input.
 * - `'text'` (the default): it is encoded as ordinary characters, so text from users cannot inject control tokens.
 * - `'parse'`: each occurrence becomes the special token's id.
 */
export type SpecialTokenHandling = 'text' | 'parse';

export interface EncodeOptions {
  /** Default `'text'`; see {@link SpecialTokenHandling}. */
  readonly specialTokens?: SpecialTokenHandling;
  /** Prepend the tokenizer's BOS id (default false). An error if the tokenizer has none. */
  readonly bos?: boolean;
  /** Append the tokenizer's EOS id (default false). An error if the tokenizer has none. */
  readonly eos?: boolean;
  /**
   * Apply a Hugging Face tokenizer.json's `post_processor` (default false), as `add_special_tokens=True` does there
   * (Llama 2 and Gemma prepend BOS this way). Other tokenizers have none and ignore it.
   */
  readonly addSpecialTokens?: boolean;
}

/**
 * The one interface every Loom tokenizer implements.
 *
 * Decoding rule for bad bytes: token bytes that do not form valid UTF-8 decode to U+FFFD, one per maximal
 * invalid subsequence (the WHATWG Encoding Standard's rule, as `TextDecoder` applies it); a leading U+FEFF is
 * kept. Lone surrogates in `encode` input are encoded as U+FFFD (as `TextEncoder` does), so they decode to U+FFFD.
 */
export interface Tokenizer {
  readonly kind: TokenizerKind;
  /** Number of ids: every id in `[0, vocabSize)` decodes. */
  readonly vocabSize: number;
  /** Beginning-of-sequence id, if the tokenizer has one. */
  readonly bos: number | undefined;
  /** End-of-sequence id, if the tokenizer has one. */
  readonly eos: number | undefined;
  /** Every special token, by text and id. */
  readonly specialTokens: readonly SpecialToken[];
  /** The id of a special token by its text (`'<|endoftext|>'`), or undefined. */
  specialTokenId(text: string): number | undefined;
  encode(text: string, options?: EncodeOptions): number[];
  /** Text of `ids`; throws on an id outside `[0, vocabSize)`. */
  decode(ids: ArrayLike<number>): string;
  /**
   * Raw bytes of `ids`. `previous` is the id that came just before `ids[0]`, for tokenizers whose output depends
   * on it (llama2.c drops the leading space of a piece that follows BOS).
   */
  decodeBytes(ids: ArrayLike<number>, previous?: number): Uint8Array;
  /** The id of a vocabulary entry written as {@link idToToken} writes it, or of a special token; else undefined. */
  tokenToId(token: string): number | undefined;
  /** The vocabulary entry of `id` (byte-level BPE writes bytes in the GPT-2 byte-to-unicode alphabet). */
  idToToken(id: number): string;
  /** A JSON value that `tokenizerFromJSON` turns back into an identical tokenizer. */
  toJSON(): LoomTokenizerJson;
}
