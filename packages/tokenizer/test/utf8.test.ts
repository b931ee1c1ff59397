import { describe, expect, it } from 'vitest';
import { findInvalidUtf8 } from '../src/utf8';
import { HARD_CASES, randomText, seededRandom } from './helpers';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** U+FFFD that decoding `bytes` inserts: all of them less those spelt out validly (EF BF BD, always a whole character). */
function insertedReplacements(bytes: Uint8Array): number {
  const all = lenient.decode(bytes).split('\ufffd').length - 1;
  let spelt = 0;
  for (let i = 0; i + 2 < bytes.length; i++) {
    if (bytes[i] === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) spelt++;
  }
  return all - spelt;
}

/** Random bytes that are often nearly UTF-8: text, lead and continuation bytes, and bytes UTF-8 never uses. */
function randomBytes(random: () => number): Uint8Array {
  const bytes: number[] = [];
  for (let i = Math.floor(random() * 24); i > 0; i--) {
    const kind = random();
    if (kind < 0.4) bytes.push(...new TextEncoder().encode(randomText(random, 3)));
    else if (kind < 0.6) bytes.push(0x80 + Math.floor(random() * 64));
    else if (kind < 0.85) bytes.push(0xc0 + Math.floor(random() * 64));
    else bytes.push(Math.floor(random() * 256));
  }
  return Uint8Array.from(bytes);
}

describe('findInvalidUtf8', () => {
  it('finds nothing in UTF-8', () => {
    const random = seededRandom(3);
    const texts = [...HARD_CASES, ...Array.from({ length: 300 }, () => randomText(random))];
    for (const text of texts) expect(findInvalidUtf8(new TextEncoder().encode(text))).toBeUndefined();
  });

  it('delimits invalid sequences as the WHATWG decoder does', () => {
    const cases: [number[], number, number][] = [
      [[0x41, 0x80], 1, 1], // a lone continuation byte
      [[0xc0, 0x80], 0, 2], // overlong NUL: C0 is never a lead byte
      [[0xe0, 0x80, 0x80], 0, 3], // overlong: E0 needs A0-BF next
      [[0xed, 0xa0, 0x80], 0, 3], // a surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0, 4], // past U+10FFFF
      [[0x41, 0xe6, 0x97], 1, 1], // truncated at the end
      [[0xe6, 0x41, 0xe6, 0x97, 0xa5], 0, 1], // truncated by the next character
      [[0xef, 0xbf, 0xbd, 0xff], 3, 1], // a real U+FFFD, then FF
    ];
    for (const [bytes, offset, count] of cases) {
      expect(findInvalidUtf8(Uint8Array.from(bytes)), JSON.stringify(bytes)).toEqual({ offset, count });
      expect(insertedReplacements(Uint8Array.from(bytes))).toBe(count);
    }
  });

  it('counts one per U+FFFD of the decoder and points at the first, on random bytes', () => {
    const random = seededRandom(8);
    for (let i = 0; i < 3000; i++) {
      const bytes = randomBytes(random);
      const invalid = findInvalidUtf8(bytes);
      const label = JSON.stringify(Array.from(bytes));
      expect(invalid?.count ?? 0, label).toBe(insertedReplacements(bytes));
      if (invalid === undefined) continue;
      // Everything before the offset is UTF-8, and an inserted U+FFFD starts there.
      const rest = bytes.subarray(invalid.offset);
      expect(() => strict.decode(bytes.subarray(0, invalid.offset)), label).not.toThrow();
      expect(lenient.decode(rest)[0], label).toBe('\ufffd');
      expect(Array.from(rest.subarray(0, 3)), label).not.toEqual([0xef, 0xbf, 0xbd]);
    }
  });
});
