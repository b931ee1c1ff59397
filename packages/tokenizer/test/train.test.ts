import { describe, expect, it } from 'vitest';
import { trainBpe } from '../src/index';
import { HARD_CASES, randomText, readData, seededRandom } from './helpers';

const shakespeare = readData('tinyshakespeare.txt').toString('utf8');

describe('byte-level BPE training', () => {
  it('learns exactly the requested vocabulary size, with <|endoftext|> last', () => {
    const tok = trainBpe(shakespeare.slice(0, 200_000), { vocabSize: 1000 });
    expect(tok.vocabSize).toBe(1000);
    expect(tok.specialTokenId('<|endoftext|>')).toBe(999);
    expect(tok.bos).toBe(999);
    expect(tok.idToToken(256)).toBe('Ġt');
  });

  it('is deterministic: the same text gives the same tokenizer', () => {
    const text = shakespeare.slice(0, 300_000);
    const first = JSON.stringify(trainBpe(text, { vocabSize: 1500 }).toJSON());
    const second = JSON.stringify(trainBpe(text, { vocabSize: 1500 }).toJSON());
    expect(second).toBe(first);
  });

  it('trains an 8k vocabulary on TinyShakespeare that round-trips any text', () => {
    const progress: number[] = [];
    const tok = trainBpe(shakespeare, {
      vocabSize: 8192,
      onProgress: (done, total) => progress.push(done / total),
    });
    expect(tok.vocabSize).toBe(8192);
    expect(progress[progress.length - 1]).toBe(1);
    const ids = tok.encode(shakespeare);
    expect(ids.length).toBeLessThan(shakespeare.length / 3);
    expect(tok.decode(ids)).toBe(shakespeare);
    const random = seededRandom(50);
    for (const text of HARD_CASES) expect(tok.decode(tok.encode(text))).toBe(text);
    for (let i = 0; i < 1000; i++) {
      const text = randomText(random, 60);
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
  });

  it('stops early when the text has no pairs left to merge', () => {
    const tok = trainBpe('abab', { vocabSize: 300, specialTokens: [] });
    expect(tok.vocabSize).toBe(258);
    expect(tok.encode('abab')).toEqual([257]);
  });

  it('rejects impossible vocabulary sizes', () => {
    expect(() => trainBpe('x', { vocabSize: 100 })).toThrow(
      'trainBpe: vocabSize 100 is not possible; expected an integer from 257',
    );
  });
});
