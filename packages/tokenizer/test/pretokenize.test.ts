import { describe, expect, it } from 'vitest';
import { bytesToUnicode, GPT2_PATTERN, pretokenize, unicodeToBytes } from '../src/index';
import { HARD_CASES, randomTextWithSurrogates, readData, seededRandom } from './helpers';

const byRegex = (text: string): string[] => text.match(GPT2_PATTERN) ?? [];

describe('GPT-2 pre-tokenisation scanner', () => {
  it('splits the hard cases exactly as the regex', () => {
    for (const text of HARD_CASES) expect(pretokenize(text)).toEqual(byRegex(text));
  });

  it('splits 20000 random strings (lone surrogates included) exactly as the regex', () => {
    const random = seededRandom(10);
    for (let i = 0; i < 20000; i++) {
      const text = randomTextWithSurrogates(random, 30);
      expect(pretokenize(text), JSON.stringify(text)).toEqual(byRegex(text));
    }
  });

  it('splits strings over a tiny alphabet of tricky characters exactly as the regex', () => {
    const random = seededRandom(11);
    const alphabet = [' ', ' ', '\n', '\t', "'", 's', 'l', 'e', 'S', '1', '!', '\u00a0', '😀', '\ud800'];
    for (let i = 0; i < 20000; i++) {
      let text = '';
      const length = Math.floor(random() * 12);
      for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(pretokenize(text), JSON.stringify(text)).toEqual(byRegex(text));
    }
  });

  it('splits TinyShakespeare exactly as the regex', () => {
    const text = readData('tinyshakespeare.txt').toString('utf8');
    expect(pretokenize(text)).toEqual(byRegex(text));
  });

  it('keeps the whitespace-lookahead rule: a run before a word gives its last space to the word', () => {
    expect(pretokenize('a   b')).toEqual(['a', '  ', ' b']);
    expect(pretokenize('a \n b')).toEqual(['a', ' \n', ' b']);
    expect(pretokenize('a\nb')).toEqual(['a', '\n', 'b']);
    expect(pretokenize('end   ')).toEqual(['end', '   ']);
    expect(pretokenize("it's IT'S")).toEqual(['it', "'s", ' IT', "'", 'S']);
  });
});

describe('byte-to-unicode alphabet', () => {
  it('maps all 256 bytes reversibly, printable bytes to themselves', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const text = bytesToUnicode(all);
    expect(new Set(text).size).toBe(256);
    expect(unicodeToBytes(text)).toEqual(all);
    expect(bytesToUnicode(Uint8Array.of(0x20, 0x0a, 0x41))).toBe('ĠĊA');
    expect(unicodeToBytes('a b')).toEqual({ badIndex: 1 });
  });
});
