import { withFileSource } from '../file-source';
import { readGgufHeader } from './header';
import { Metadata } from './metadata';
import { ggufTokenizerJson } from './tokenizer';

/** The first four bytes of every GGUF file. */
const MAGIC = 'GGUF';

/** True when `head` (a file's first bytes) starts as a GGUF file does. */
export function looksLikeGguf(head: Uint8Array): boolean {
  return head.length >= 4 && String.fromCharCode(...head.subarray(0, 4)) === MAGIC;
}

/**
 * The vocabulary of the GGUF file at `path` as Loom tokenizer JSON text, reading only its header (never its tensors),
 * so any GGUF model can lend its tokenizer to another model of the same vocabulary (`--tokenizer model.gguf`).
 */
export function readGgufTokenizerJson(path: string): string {
  return withFileSource(path, 'a GGUF file', (source) => {
    const meta = new Metadata(readGgufHeader(source).metadata, source.name);
    if (!meta.has('tokenizer.ggml.model')) {
      throw new Error(
        `${source.name}: this GGUF file carries no vocabulary (no "tokenizer.ggml.model"); pass a tokenizer file or a GGUF model that has one`,
      );
    }
    const tokens = meta.strings('tokenizer.ggml.tokens');
    return ggufTokenizerJson(meta, tokens.length, source.name);
  });
}
