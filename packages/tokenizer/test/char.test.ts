import { describe, expect, it } from 'vitest';
import { CharTokenizer } from '../src/index';
import { randomText, readData, seededRandom } from './helpers';

describe('character-level tokenizer', () => {
  const shakespeare = readData('tinyshakespeare.txt').toString('utf8');

  it('builds the usual 65-character TinyShakespeare vocabulary, sorted by code point', () => {
    const tok = CharTokenizer.fromCorpus(shakespeare);
    expect(tok.vocabSize).toBe(65);
    expect(tok.idToToken(0)).toBe('\n');
    expect(tok.idToToken(1)).toBe(' ');
    expect(tok.encode('hii there')).toEqual([46, 47, 47, 1, 58, 46, 43, 56, 43]);
    expect(tok.decode(tok.encode(shakespeare))).toBe(shakespeare);
    expect(tok.bos).toBeUndefined();
  });

  it('round-trips any text whose characters are in the corpus, astral characters included', () => {
    const random = seededRandom(40);
    const corpus = Array.from({ length: 300 }, () => randomText(random, 50)).join('');
    const tok = CharTokenizer.fromCorpus(corpus);
    for (let i = 0; i < 1000; i++) {
      const text = [...randomText(random, 50)].filter((c) => tok.tokenToId(c) !== undefined).join('');
      expect(tok.decode(tok.encode(text))).toBe(text);
      expect(new TextDecoder('utf-8', { ignoreBOM: true }).decode(tok.decodeBytes(tok.encode(text)))).toBe(
        text,
      );
    }
  });

  it('applies the unknown-character policy it was given', () => {
    expect(() => CharTokenizer.fromCorpus('abc').encode('abXc')).toThrow(
      'encode: character "X" (U+0058) at index 2 is not in this character vocabulary of 3',
    );
    expect(CharTokenizer.fromCorpus('abc', { unknown: 'skip' }).encode('abXc😀')).toEqual([0, 1, 2]);
    const unk = CharTokenizer.fromCorpus('abc', { unknown: 'unk' });
    expect(unk.vocabSize).toBe(4);
    expect(unk.encode('aX😀')).toEqual([0, 3, 3]);
    expect(unk.decode([0, 3])).toBe('a<unk>');
  });

  it('treats special-token text as plain text unless asked to parse it', () => {
    const tok = CharTokenizer.fromCorpus('<>abcdefghijklmnopqrstuvwxyz|', {
      specialTokens: ['<|endoftext|>'],
      bos: '<|endoftext|>',
      eos: '<|endoftext|>',
    });
    const eot = tok.specialTokenId('<|endoftext|>')!;
    expect(eot).toBe(tok.vocabSize - 1);
    expect(tok.encode('a<|endoftext|>')).not.toContain(eot);
    expect(tok.encode('a<|endoftext|>', { specialTokens: 'parse' })).toEqual([tok.tokenToId('a'), eot]);
    expect(tok.encode('a', { bos: true, eos: true })).toEqual([eot, tok.tokenToId('a'), eot]);
  });

  it('reads lone surrogates as U+FFFD and rejects bad ids', () => {
    const tok = CharTokenizer.fromCorpus('a\ud800');
    expect(tok.idToToken(1)).toBe('\ufffd');
    expect(tok.decode(tok.encode('\udc00a'))).toBe('\ufffda');
    expect(() => tok.decode([2])).toThrow('decode: id 2 is out of range for vocabulary size 2');
    expect(() => CharTokenizer.fromCorpus('a', { bos: '<s>' })).toThrow(
      'bos "<s>" is not one of the special tokens',
    );
  });
});
