import { tokenizerBeside } from '@loom/generate/paths';
import { readTokenizerFile } from '@loom/generate/tokenizer-file';
import type { GgufVocabulary } from '@loom/models';
import { detectTokenizerFormat, loadTokenizer, type Tokenizer, type TokenizerFormat } from '@loom/tokenizer';
import { serializeLlama2cTokenizer } from './llama2c-tokenizer';

/** The tokenizer a conversion carries along, and its file when it came from one (copied as it is where it fits). */
export interface CarriedTokenizer {
  readonly tokenizer: Tokenizer;
  readonly file?: { readonly bytes: Uint8Array; readonly format: TokenizerFormat | undefined };
}

/** A file the output gets beside the weights. */
export interface TokenizerFile {
  readonly name: 'tokenizer.bin' | 'tokenizer.json';
  readonly bytes: Uint8Array;
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** --tokenizer, else the model's own (a checkpoint's, a GGUF vocabulary), else a tokenizer file beside IN. */
export function carriedTokenizer(
  flag: string | undefined,
  input: string,
  modelTokenizerJson: string | undefined,
  env: NodeJS.ProcessEnv,
): CarriedTokenizer | undefined {
  const path = flag ?? (modelTokenizerJson === undefined ? tokenizerBeside(input) : undefined);
  if (path === undefined) {
    if (modelTokenizerJson === undefined) return undefined;
    return { tokenizer: loadTokenizer(utf8(modelTokenizerJson), `${input} (tokenizer.json)`) };
  }
  const { tokenizer, bytes } = readTokenizerFile('--tokenizer', path, env);
  return bytes === undefined
    ? { tokenizer }
    : { tokenizer, file: { bytes, format: detectTokenizerFormat(bytes) } };
}

/** Loom tokenizer JSON text, as a Loom checkpoint holds it. */
export function loomTokenizerJson(carried: CarriedTokenizer): string {
  return JSON.stringify(carried.tokenizer.toJSON());
}

/** A llama2.c tokenizer.bin: the file itself when it is one, else written from the tokenizer; undefined for others. */
export function llama2cTokenizerBytes(carried: CarriedTokenizer): Uint8Array | undefined {
  if (carried.file?.format === 'llama2c') return carried.file.bytes;
  const json = carried.tokenizer.toJSON();
  return json.kind === 'llama2c' ? serializeLlama2cTokenizer(json) : undefined;
}

/**
 * The tokenizer file for a Hugging Face directory: a llama2.c tokenizer.bin or a Hugging Face tokenizer.json as it
 * is, other tokenizers as Loom tokenizer JSON (which Loom reads as tokenizer.json).
 */
export function hfTokenizerFile(carried: CarriedTokenizer): TokenizerFile {
  if (carried.file?.format === 'llama2c') return { name: 'tokenizer.bin', bytes: carried.file.bytes };
  if (carried.file?.format === 'hf-json') return { name: 'tokenizer.json', bytes: carried.file.bytes };
  return { name: 'tokenizer.json', bytes: utf8(`${loomTokenizerJson(carried)}\n`) };
}

/**
 * The GGUF vocabulary of a llama2.c (SentencePiece) tokenizer whose pieces are text, with its <unk>, <s>, </s> at
 * ids 0, 1, 2 named so (llama2.c exports write them as text like "\n<s>\n", which only run.c's decoder reads);
 * undefined for other tokenizers.
 */
export function ggufVocabulary(carried: CarriedTokenizer): GgufVocabulary | undefined {
  const json = carried.tokenizer.toJSON();
  if (json.kind !== 'llama2c' || json.pieceEncoding !== 'utf8') return undefined;
  const { bos, eos } = carried.tokenizer;
  if (bos !== 1 || eos !== 2) return undefined;
  const control = ['<unk>', '<s>', '</s>'];
  return { pieces: json.pieces.map((piece, id) => control[id] ?? piece), scores: json.scores };
}
