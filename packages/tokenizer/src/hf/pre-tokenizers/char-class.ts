import { escapeRegExp } from '../regex';
import { type SplitBehavior, splitPiece } from './split';

/** Word characters and white space as Oniguruma's Unicode `\w` and `\s` define them. */
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WORDS_OR_SYMBOLS = new RegExp(`[${WORD}]+|[^${WORD}\\p{White_Space}]+`, 'gu');
const SPACES = /\p{White_Space}+/gu;
/** ASCII punctuation or a Unicode punctuation character, one at a time (BERT's rule). */
const PUNCTUATION = /[!-/:-@[-`{-~\p{P}]/gu;
const DIGIT = /\p{N}/gu;

/** `Whitespace`: runs of word characters and runs of other non-space characters; spaces are dropped. */
export function whitespaceSplit(piece: string): string[] {
  return splitPiece(piece, WORDS_OR_SYMBOLS, 'Removed', true);
}

/** `WhitespaceSplit`: the text between runs of white space. */
export function spaceSplit(piece: string): string[] {
  return splitPiece(piece, SPACES, 'Removed');
}

/** `Punctuation`: each punctuation character is a delimiter handled as `behavior` says. */
export function punctuationSplit(piece: string, behavior: SplitBehavior): string[] {
  return splitPiece(piece, PUNCTUATION, behavior);
}

/** `BertPreTokenizer`: split at white space (dropped), then isolate each punctuation character. */
export function bertSplit(piece: string): string[] {
  return spaceSplit(piece).flatMap((part) => punctuationSplit(part, 'Isolated'));
}

/** `Digits`: each digit alone, or each run of digits. */
export function digitsSplit(piece: string, individual: boolean): string[] {
  return splitPiece(piece, DIGIT, individual ? 'Isolated' : 'Contiguous');
}

/** `CharDelimiterSplit`: the text between occurrences of `delimiter`. */
export function delimiterSplitter(delimiter: string): (piece: string) => string[] {
  const pattern = new RegExp(escapeRegExp(delimiter), 'gu');
  return (piece) => splitPiece(piece, pattern, 'Removed');
}
