import { describe, expect, it } from 'vitest';
import { Llama2cTokenizer, loadTokenizer, parseLlama2cTokenizer, StreamDecoder } from '../src/index';
import { randomText, readData, seededRandom } from './helpers';
import { runCEncoder } from './run-c-reference';

const bytes = readData('models/tok512.bin');
const tok512 = loadTokenizer(bytes, 'tok512.bin');
const golden = JSON.parse(readData('golden/stories260K.json').toString('utf8')) as {
  greedy: { prompt: string; prompt_tokens: number[]; sequence: number[]; text: string }[];
};

describe('llama2.c tokenizer.bin (tok512)', () => {
  it('is recognised and loaded with 512 ids, BOS 1 and EOS 2', () => {
    expect(tok512.kind).toBe('llama2c');
    expect(tok512.vocabSize).toBe(512);
    expect(tok512.bos).toBe(1);
    expect(tok512.eos).toBe(2);
    expect(tok512 instanceof Llama2cTokenizer && tok512.maxTokenLength).toBe(7);
  });

  it('encodes "Once upon a time" as BOS then the golden prompt tokens', () => {
    const once = golden.greedy.find((g) => g.prompt === 'Once upon a time')!;
    expect(once.prompt_tokens[0]).toBe(1);
    expect(tok512.encode('Once upon a time', { bos: true })).toEqual(once.prompt_tokens);
    for (const g of golden.greedy) expect(tok512.encode(g.prompt, { bos: true })).toEqual(g.prompt_tokens);
  });

  it('decodes the golden sequences to the golden text (space after BOS dropped)', () => {
    for (const g of golden.greedy) expect(tok512.decode(g.sequence)).toBe(g.text);
  });

  it('matches run.c on 500 random strings, byte fallback included', () => {
    const reference = runCEncoder(parseLlama2cTokenizer(bytes));
    const random = seededRandom(20);
    for (let i = 0; i < 500; i++) {
      const text = randomText(random, 30);
      expect(tok512.encode(text, { bos: true }), JSON.stringify(text)).toEqual([1, ...reference(text)]);
      expect(tok512.decode(tok512.encode(text, { bos: true }))).toBe(text);
    }
  });

  it('uses byte tokens <0xXX> for characters outside the vocabulary and decodes them back to bytes', () => {
    const ids = tok512.encode('日');
    expect(ids).toEqual([410, 0xe6 + 3, 0x97 + 3, 0xa5 + 3]);
    expect(tok512.decode(ids)).toBe(' 日');
    expect(tok512.decode([1, ...ids])).toBe('日');
    expect(tok512.decode([0xe6 + 3])).toBe('\ufffd');
  });

  it('keeps the leading space except right after BOS, and writes no text for BOS/EOS', () => {
    const [, ...ids] = tok512.encode('Once', { bos: true });
    expect(tok512.decode(ids)).toBe(' Once');
    expect(tok512.decode([1, ...ids, 2])).toBe('Once');
    expect(tok512.decodeBytes(ids, 1)).toEqual(new TextEncoder().encode('Once'));
    expect(tok512.encode('')).toEqual([]);
    expect(tok512.encode('', { bos: true, eos: true })).toEqual([1, 2]);
  });

  it('parses <s> and </s> only when asked', () => {
    expect(tok512.encode('a</s>')).not.toContain(2);
    expect(tok512.encode('a</s>', { specialTokens: 'parse' })).toEqual([...tok512.encode('a'), 2]);
    expect(tok512.tokenToId('<s>')).toBe(1);
    expect(tok512.idToToken(261)).toBe(' a');
    expect(tok512.tokenToId(' a')).toBe(261);
  });

  it('rejects out-of-range ids and truncated files', () => {
    expect(() => tok512.decode([512])).toThrow('decode: id 512 is out of range for vocabulary size 512');
    expect(() => loadTokenizer(bytes.subarray(0, 1000), 'tok512.bin')).toThrow(
      /tok512\.bin: not a tokenizer file Loom recognises \(tok512\.bin: token \d+ /,
    );
    expect(() => parseLlama2cTokenizer(bytes.subarray(0, 1000), 'tok512.bin')).toThrow(
      /the file is truncated/,
    );
  });

  it('streams multi-byte characters split across byte tokens without broken characters', () => {
    const text = 'Hi 日本語 👍🏽 ok';
    const ids = tok512.encode(text, { bos: true });
    const decoder = new StreamDecoder(tok512);
    const chunks = ids.map((id) => decoder.push(id));
    chunks.push(decoder.flush());
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) expect(chunk).not.toContain('\ufffd');
    expect(chunks.filter((chunk) => chunk === '').length).toBeGreaterThan(5);
  });
});
