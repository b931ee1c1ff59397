/** The contents of a llama2.c `tokenizer.bin`. */
export interface Llama2cVocab {
  readonly maxTokenLength: number;
  /** Bytes of each token (SentencePiece's `▁` already written as a space). */
  readonly pieces: readonly Uint8Array[];
  /** float32 merge score of each token. */
  readonly scores: Float32Array;
}

/**
 * Parses a llama2.c `tokenizer.bin`: int32 max_token_length, then per token a float32 score, an int32 byte
 * length and the bytes (little-endian), up to the end of the file.
 */
export function parseLlama2cTokenizer(bytes: Uint8Array, source = 'tokenizer.bin'): Llama2cVocab {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4) {
    throw new Error(
      `${source}: ${bytes.length} bytes is too short for a llama2.c tokenizer.bin (expected a 4-byte header); the file is truncated or not that format`,
    );
  }
  const maxTokenLength = view.getInt32(0, true);
  if (maxTokenLength <= 0) {
    throw new Error(
      `${source}: header max_token_length is ${maxTokenLength}; expected a positive int32 — not a llama2.c tokenizer.bin`,
    );
  }
  const pieces: Uint8Array[] = [];
  const scores: number[] = [];
  let offset = 4;
  while (offset < bytes.length) {
    const id = pieces.length;
    if (offset + 8 > bytes.length) {
      throw new Error(
        `${source}: token ${id} at byte ${offset} needs an 8-byte score and length but only ${bytes.length - offset} bytes remain; the file is truncated`,
      );
    }
    const score = view.getFloat32(offset, true);
    const length = view.getInt32(offset + 4, true);
    offset += 8;
    if (length < 0 || offset + length > bytes.length) {
      throw new Error(
        `${source}: token ${id} declares ${length} bytes but ${bytes.length - offset} remain; the file is truncated or not a llama2.c tokenizer.bin`,
      );
    }
    pieces.push(bytes.slice(offset, offset + length));
    scores.push(score);
    offset += length;
  }
  if (pieces.length < 3) {
    throw new Error(
      `${source}: holds ${pieces.length} tokens; a llama2.c vocabulary needs at least <unk>, <s> and </s>`,
    );
  }
  return { maxTokenLength, pieces, scores: Float32Array.from(scores) };
}
