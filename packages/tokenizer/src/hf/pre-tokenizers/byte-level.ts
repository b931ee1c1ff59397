import { bytesToUnicode } from '../../bpe/byte-unicode';
import { nextPieceEnd } from '../../bpe/pretokenize';
import { utf8Encode } from '../../utf8';

/** Options of the `ByteLevel` pre-tokenizer. */
export interface ByteLevelOptions {
  /** Prepend a space to each piece that does not start with one. */
  readonly addPrefixSpace: boolean;
  /** Split with GPT-2's pattern first. */
  readonly useRegex: boolean;
}

/**
 * GPT-2's byte-level step: optionally a prefix space and GPT-2's split (the hand-written scanner Loom's GPT-2
 * tokenizer uses), then each piece's UTF-8 bytes written in the byte-to-unicode alphabet.
 */
export function byteLevelSplit(piece: string, options: ByteLevelOptions): string[] {
  const text = options.addPrefixSpace && !piece.startsWith(' ') ? ` ${piece}` : piece;
  const pieces: string[] = [];
  if (!options.useRegex) {
    pieces.push(bytesToUnicode(utf8Encode(text)));
    return pieces;
  }
  for (let start = 0; start < text.length; ) {
    const end = nextPieceEnd(text, start);
    pieces.push(bytesToUnicode(utf8Encode(text.slice(start, end))));
    start = end;
  }
  return pieces;
}
