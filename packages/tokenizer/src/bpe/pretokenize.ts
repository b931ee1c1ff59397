import { classOf, SPACE } from './unicode-class';

/**
 * GPT-2's pre-tokenisation pattern. {@link nextPieceEnd} is a hand-written scanner that splits text exactly as
 * this regex does (tested against it), without the regex's cost.
 */
export const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const APOSTROPHE = 0x27;
const SPACE_CHAR = 0x20;

/** Length of a contraction (`'s 't 're 've 'm 'll 'd`, lower case only) starting at the apostrophe at `i`, or 0. */
function contractionLength(text: string, i: number): number {
  const a = text.charCodeAt(i + 1);
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  const b = text.charCodeAt(i + 2);
  if ((a === 0x72 && b === 0x65) || (a === 0x76 && b === 0x65) || (a === 0x6c && b === 0x6c)) return 3; // re ve ll
  return 0;
}

/** End of the run of code points of class `cls` starting at `i`. */
function runEnd(text: string, i: number, cls: number): number {
  const n = text.length;
  while (i < n) {
    const codePoint = text.codePointAt(i)!;
    if (classOf(codePoint) !== cls) break;
    i += codePoint > 0xffff ? 2 : 1;
  }
  return i;
}

/**
 * End (exclusive) of the GPT-2 piece that starts at `start` (< text.length). The alternatives, in the regex's
 * order: a contraction; an optional space then a run of letters, of numbers, or of other characters; a
 * whitespace run not followed by a non-space (so a run before a word leaves its last character to that word);
 * any whitespace run.
 */
export function nextPieceEnd(text: string, start: number): number {
  const n = text.length;
  const first = text.charCodeAt(start);
  if (first === APOSTROPHE) {
    const length = contractionLength(text, start);
    if (length > 0) return start + length;
  }
  let i = start;
  let cls = classOf(text.codePointAt(start)!);
  if (first === SPACE_CHAR && start + 1 < n) {
    const nextClass = classOf(text.codePointAt(start + 1)!);
    if (nextClass !== SPACE) {
      i = start + 1;
      cls = nextClass;
    }
  }
  if (cls !== SPACE) return runEnd(text, i, cls);
  // Every \s character is in the BMP, so the run can be scanned by code unit.
  let end = start + 1;
  while (end < n && classOf(text.charCodeAt(end)) === SPACE) end++;
  if (end === n || end - start === 1) return end;
  return end - 1;
}

/** The GPT-2 pieces of `text`, in order. */
export function pretokenize(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = nextPieceEnd(text, start);
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
