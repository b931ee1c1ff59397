import { encode as gptTokenizerEncode } from 'gpt-tokenizer/encoding/r50k_base';
import { Tiktoken } from 'js-tiktoken/lite';
import r50kRanks from 'js-tiktoken/ranks/r50k_base';
import { describe, expect, it } from 'vitest';
import { bytesToUnicode, tokenizerFromHfJson, tokenizerFromTiktoken } from '../src/index';
import { HARD_CASES, randomText, randomTextWithSurrogates, readData, seededRandom } from './helpers';
import { hfJsonFromRanks } from './hf-from-ranks';

const ranksText = readData('gpt2/r50k_base.tiktoken').toString('utf8');
const gpt2 = tokenizerFromTiktoken(ranksText, { source: 'r50k_base.tiktoken' });
const reference = new Tiktoken(r50kRanks);
/** js-tiktoken (quadratic on long pieces, so used up to 1000 chars) and gpt-tokenizer, special text as plain text. */
const referenceEncode = (text: string) => reference.encode(text, [], []);
const gptTokenizer = (text: string) => gptTokenizerEncode(text, { disallowedSpecial: new Set() });
const shakespeare = readData('tinyshakespeare.txt').toString('utf8');

describe('GPT-2 (r50k_base) byte-level BPE', () => {
  it('has 50257 ids with <|endoftext|> = 50256 as BOS and EOS', () => {
    expect(gpt2.vocabSize).toBe(50257);
    expect(gpt2.specialTokenId('<|endoftext|>')).toBe(50256);
    expect(gpt2.bos).toBe(50256);
    expect(gpt2.eos).toBe(50256);
    expect(gpt2.tokenToId('Ġthe')).toBe(262);
    expect(gpt2.idToToken(262)).toBe('Ġthe');
    expect(gpt2.idToToken(50256)).toBe('<|endoftext|>');
  });

  it.each(HARD_CASES.map((text) => [JSON.stringify(text).slice(0, 50), text]))(
    'matches the references on %s',
    (_, text) => {
      const ids = gpt2.encode(text);
      expect(ids).toEqual(gptTokenizer(text));
      if (text.length <= 1000) expect(ids).toEqual(referenceEncode(text));
      expect(gpt2.decode(ids)).toBe(text);
    },
  );

  it('matches js-tiktoken on 2000 random strings (with lone surrogates) and on TinyShakespeare', () => {
    const random = seededRandom(1);
    for (let i = 0; i < 2000; i++) {
      const text = randomTextWithSurrogates(random, 60);
      expect(gpt2.encode(text), JSON.stringify(text)).toEqual(referenceEncode(text));
    }
    expect(gpt2.encode(shakespeare)).toEqual(referenceEncode(shakespeare));
  });

  it('matches gpt-tokenizer on long random words (the heap merge path)', () => {
    const random = seededRandom(2);
    const alphabet = 'etaoinshrdlu';
    for (let i = 0; i < 20; i++) {
      const length = 49 + Math.floor(random() * 2000);
      let word = '';
      for (let j = 0; j < length; j++) word += alphabet[Math.floor(random() * alphabet.length)];
      expect(gpt2.encode(word)).toEqual(gptTokenizer(word));
    }
  });

  it('decodes what it encodes for 5000 random Unicode strings', () => {
    const random = seededRandom(3);
    for (let i = 0; i < 5000; i++) {
      const text = randomText(random, 80);
      expect(gpt2.decode(gpt2.encode(text))).toBe(text);
    }
  });

  it('encodes special-token text as plain text unless asked to parse it', () => {
    const text = 'a<|endoftext|>b';
    expect(gpt2.encode(text)).not.toContain(50256);
    expect(gpt2.encode(text)).toEqual(referenceEncode(text));
    expect(gpt2.encode(text, { specialTokens: 'parse' })).toEqual([64, 50256, 65]);
    expect(gpt2.encode('<|endoftext|>', { specialTokens: 'parse' })).toEqual([50256]);
    expect(gpt2.encode('x', { bos: true, eos: true })).toEqual([50256, 87, 50256]);
    expect(gpt2.decode([64, 50256, 65])).toBe('a<|endoftext|>b');
  });

  it('loads identically from a Hugging Face tokenizer.json built from the ranks', () => {
    const hf = tokenizerFromHfJson(JSON.parse(JSON.stringify(hfJsonFromRanks(ranksText))), {
      source: 'gpt2 tokenizer.json',
    });
    expect(hf.vocabSize).toBe(50257);
    expect(hf.specialTokenId('<|endoftext|>')).toBe(50256);
    const random = seededRandom(4);
    const texts = [...HARD_CASES, shakespeare.slice(0, 200_000)];
    for (let i = 0; i < 1000; i++) texts.push(randomText(random, 60));
    for (const text of texts) {
      const ids = hf.encode(text);
      expect(ids, JSON.stringify(text).slice(0, 60)).toEqual(gpt2.encode(text));
      expect(hf.decode(ids)).toBe(text);
    }
  });

  it('follows the documented rule for lone surrogates and invalid UTF-8: U+FFFD', () => {
    expect(gpt2.decode(gpt2.encode('a\ud800b\udfffc'))).toBe('a\ufffdb\ufffdc');
    const byteE6 = gpt2.tokenToId(bytesToUnicode(Uint8Array.of(0xe6)))!;
    const byteFF = gpt2.tokenToId(bytesToUnicode(Uint8Array.of(0xff)))!;
    expect(gpt2.decode([byteE6])).toBe('\ufffd');
    expect(gpt2.decode([64, byteFF, 65])).toBe('a\ufffdb');
    expect(gpt2.decode(gpt2.encode('\ufeffBOM kept'))).toBe('\ufeffBOM kept');
  });

  it('rejects ids out of range, naming the id and the vocabulary size', () => {
    expect(() => gpt2.decode([60000])).toThrow('decode: id 60000 is out of range for vocabulary size 50257');
    expect(() => gpt2.decode([-1])).toThrow('id -1 is out of range');
    expect(() => gpt2.decode([1.5])).toThrow('id 1.5 is out of range');
    expect(() => gpt2.idToToken(50257)).toThrow(
      'idToToken: id 50257 is out of range for vocabulary size 50257',
    );
  });
});
