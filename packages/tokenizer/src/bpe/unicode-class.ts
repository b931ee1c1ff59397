/** Character classes of the GPT-2 pre-tokenisation pattern: `\p{L}`, `\p{N}`, `\s`, and everything else. */
const LETTER = 1;
const NUMBER = 2;
export const SPACE = 3;
const OTHER = 4;

const letter = /^\p{L}$/u;
const number = /^\p{N}$/u;
const space = /^\s$/u;

/** Class per code point, filled lazily (0 = not yet known) from the same regex classes the pattern uses. */
const table = new Uint8Array(0x110000);

function classify(codePoint: number): number {
  const char = String.fromCodePoint(codePoint);
  if (letter.test(char)) return LETTER;
  if (number.test(char)) return NUMBER;
  if (space.test(char)) return SPACE;
  return OTHER;
}

for (let codePoint = 0; codePoint < 0x100; codePoint++) table[codePoint] = classify(codePoint);

/** The class of a code point (a lone surrogate is OTHER, as in the `u`-flag regex). */
export function classOf(codePoint: number): number {
  const known = table[codePoint];
  if (known !== 0) return known;
  const computed = classify(codePoint);
  table[codePoint] = computed;
  return computed;
}
