import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared data folder, `../shared/data` beside the repository. */
export const dataDir = fileURLToPath(new URL('../../../../shared/data/', import.meta.url));

/** The package folder (where the CLI runs). */
export const packageDir = fileURLToPath(new URL('../', import.meta.url));

export function readData(path: string): Buffer {
  return readFileSync(`${dataDir}${path}`);
}

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const POOLS: readonly (readonly string[])[] = [
  [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'],
  [...'0123456789'],
  [' ', ' ', ' ', '  ', '\n', '\r\n', '\t', '\u00a0', '\u3000', '\u2028', '\u200b', '\ufeff', '\v', '\f'],
  [...'\'.,;:!?-_()[]{}<>"/\\|@#$%^&*+=~`', "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL"],
  [...'éèàüößçñøåæœłžš', 'e\u0301', 'n\u0303'],
  [...'日本語中文字漢字한국어ひらがなカタカナ'],
  [...'مرحبابالعالمשלוםעולם'],
  [...'привет мир नमस्ते ไทย'],
  ['😀', '👍🏽', '👩‍👩‍👧‍👦', '🇯🇵', '❤️', '🧑🏿‍🚀', '𝐀𝐁', '𐍈', '🀄'],
  ['<|endoftext|>', '<s>', '</s>', '<0x41>', 'Ġ', 'Ċ'],
];

/** A random well-formed Unicode string: a mix of scripts, whitespace, punctuation and arbitrary code points. */
export function randomText(random: () => number, maxLength = 40): string {
  const length = Math.floor(random() * maxLength);
  let text = '';
  for (let i = 0; i < length; i++) {
    if (random() < 0.08) {
      let codePoint = Math.floor(random() * 0x110000);
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) codePoint = 0xe000;
      text += String.fromCodePoint(codePoint);
    } else {
      const pool = POOLS[Math.floor(random() * POOLS.length)];
      text += pool[Math.floor(random() * pool.length)];
    }
  }
  return text;
}

/** Like {@link randomText}, sometimes with a lone surrogate inserted. */
export function randomTextWithSurrogates(random: () => number, maxLength = 40): string {
  const text = randomText(random, maxLength);
  if (random() < 0.5) return text;
  const at = Math.floor(random() * (text.length + 1));
  const lone = String.fromCharCode(
    random() < 0.5 ? 0xd800 + Math.floor(random() * 0x400) : 0xdc00 + Math.floor(random() * 0x400),
  );
  return text.slice(0, at) + lone + text.slice(at);
}

/** GPT-2's hard cases: whitespace, \r\n, contractions, numbers, punctuation, emoji, CJK, Arabic, code, a long word. */
export const HARD_CASES: readonly string[] = [
  '',
  ' ',
  'Hello world',
  ' Hello  world   ',
  'a  b   c    d',
  '    leading spaces',
  'trailing spaces    ',
  '\n\n\nthree newlines',
  'line one\r\nline two\r\n\r\nline four',
  '\r\n \r\n\t\t x',
  'tabs\tand\t\tmore\ttabs',
  ' \u00a0 non-breaking \u3000 ideographic space',
  "I'm, you're, we've, they'll, he'd, it's, don't",
  "I'M, YOU'RE, IT'S, DON'T, 'S 'T 'Re",
  "rock 'n' roll ''s '''",
  'Numbers: 0 1 12 123 1234 12345 3.14159 1,000,000 -42 1e10 0x1F',
  '٣٤٥ ½ ² Ⅻ',
  'Punctuation!!! ... ??? ?!?! --- *** ((( ))) ,,,',
  '"quoted" \'single\' `back` «guillemets» “curly”',
  '😀 👍🏽 👩‍👩‍👧‍👦 🇯🇵 ❤️ 🧑🏿‍🚀',
  'emoji😀glued👍🏽to👩‍👩‍👧‍👦words',
  '日本語のテキストです。中文句子。한국어 문장.',
  'مرحبا بالعالم، كيف حالك؟',
  'שלום עולם',
  'Ünïcödé àçcénts and combining e\u0301 n\u0303',
  'function add(a, b) {\n  return a + b; // sum\n}\n',
  'def f(x):\n    if x > 0:\n        return x ** 2\n    return None\n',
  '<div class="x">&amp;&lt;</div>',
  'x = [1, 2, 3]; y = {"k": "v"}',
  '<|endoftext|> is plain text here',
  'a'.repeat(10_000),
  'supercalifragilistic'.repeat(500),
  '🎉'.repeat(300),
  ' '.repeat(1000),
  `${'x'.repeat(5000)} ${'y'.repeat(5000)}`,
];
