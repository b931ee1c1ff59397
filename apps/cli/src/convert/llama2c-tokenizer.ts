import type { Llama2cTokenizerJson } from '@loom/tokenizer';

/** The bytes of each piece of a llama2.c tokenizer's Loom JSON. */
export function pieceBytes(json: Llama2cTokenizerJson): Uint8Array[] {
  return json.pieces.map((piece) =>
    json.pieceEncoding === 'base64'
      ? new Uint8Array(Buffer.from(piece, 'base64'))
      : new TextEncoder().encode(piece),
  );
}

/**
 * A llama2.c `tokenizer.bin`, as llama2.c's export writes it and `parseLlama2cTokenizer` reads it: int32
 * max_token_length, then per token a float32 score, an int32 byte length and the bytes, little-endian.
 */
export function serializeLlama2cTokenizer(json: Llama2cTokenizerJson): Uint8Array {
  const pieces = pieceBytes(json);
  const bytes = new Uint8Array(4 + pieces.reduce((sum, piece) => sum + 8 + piece.length, 0));
  const view = new DataView(bytes.buffer);
  view.setInt32(0, json.maxTokenLength, true);
  let at = 4;
  pieces.forEach((piece, id) => {
    view.setFloat32(at, json.scores[id], true);
    view.setInt32(at + 4, piece.length, true);
    bytes.set(piece, at + 8);
    at += 8 + piece.length;
  });
  return bytes;
}
