import { GGUF_MAGIC } from './gguf/header';
import { LLAMA2C_HEADER_BYTES, LLAMA2C_VERSIONED_MAGIC } from './llama2c/layout';

/** The weight-file formats Loom reads. */
export type ModelFileFormat = 'safetensors' | 'llama2c' | 'gguf';

/** Header sizes above this are taken as a sign that the file is not a llama2.c checkpoint at all. */
const LLAMA2C_PLAUSIBLE_MAX = 1 << 24;

/** Bytes of a file's start that `detectModelFormat` looks at. */
export const DETECT_BYTES = 64;

/**
 * An 8-byte little-endian header length below 2^32 followed by JSON text (`{`, or `[` for the
 * wrong kind of header): the safetensors reader then says what is wrong with the header.
 */
function looksLikeSafetensors(bytes: Uint8Array): boolean {
  if (bytes.length < 9) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 8);
  return (
    view.getUint32(4, true) === 0 && view.getUint32(0, true) >= 2 && (bytes[8] === 0x7b || bytes[8] === 0x5b)
  );
}

/**
 * The versioned magic, or a header of 7 int32 of plausible magnitude (zero and negative sizes
 * included, so that the llama2.c reader names the bad field instead of a generic refusal).
 */
function looksLikeLlama2c(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 8 && view.getInt32(0, true) === LLAMA2C_VERSIONED_MAGIC) return true;
  if (bytes.length < LLAMA2C_HEADER_BYTES) return false;
  for (let i = 0; i < 7; i++) if (Math.abs(view.getInt32(4 * i, true)) > LLAMA2C_PLAUSIBLE_MAX) return false;
  return true;
}

/**
 * Recognises a weight file from its first bytes (never its name): GGUF (its magic), safetensors (an 8-byte header length, then JSON
 * starting with `{`) or a llama2.c `.bin` (a plausible 7-int32 header, or the magic of the newer versioned exports,
 * which the reader then refuses by name). A truncated file of either kind is still recognised, so that its reader
 * can say what is missing.
 */
export function detectModelFormat(bytes: Uint8Array): ModelFileFormat | undefined {
  if (
    bytes.length >= 4 &&
    new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === GGUF_MAGIC
  ) {
    return 'gguf';
  }
  if (looksLikeSafetensors(bytes)) return 'safetensors';
  if (looksLikeLlama2c(bytes)) return 'llama2c';
  return undefined;
}

/** Other formats people pass by mistake, recognised by their first bytes, with what to do instead. */
const KNOWN_OTHERS: readonly (readonly [magic: string, hint: string])[] = [
  ['PK', 'a zip archive, as PyTorch .pt/.bin pickles are — convert it to safetensors'],
  [
    '{',
    'JSON text — pass the weights file (model.safetensors or a llama2.c .bin), not a config or tokenizer',
  ],
];

/** The error for a file `detectModelFormat` does not recognise, with a hint for common mistakes. */
export function unknownFormatError(bytes: Uint8Array, source: string): Error {
  const start = new TextDecoder('latin1').decode(bytes.subarray(0, 4));
  const other = KNOWN_OTHERS.find(([magic]) => start.startsWith(magic));
  const hex = [...bytes.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
  const found =
    other === undefined ? `the first bytes are ${hex || '(none, the file is empty)'}` : `it is ${other[1]}`;
  return new Error(
    `${source}: not a model file Loom recognises; expected GGUF, safetensors (an 8-byte header length, then a JSON header) or a llama2.c .bin (a header of 7 int32: dim, hidden, layers, heads, kv heads, vocab, seq_len) — ${found}`,
  );
}
