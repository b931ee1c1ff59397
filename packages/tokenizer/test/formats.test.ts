import { describe, expect, it } from 'vitest';
import {
  CharTokenizer,
  detectTokenizerFormat,
  loadTokenizer,
  type Tokenizer,
  tokenizerFromHfJson,
  tokenizerFromJSON,
  tokenizerFromTiktoken,
  trainBpe,
} from '../src/index';
import { HARD_CASES, randomText, readData, seededRandom } from './helpers';
import { tinyHfJson } from './hf-from-ranks';

const utf8 = (text: string) => new TextEncoder().encode(text);
const ranksText = readData('gpt2/r50k_base.tiktoken').toString('utf8');
const shakespeare = readData('tinyshakespeare.txt').toString('utf8');

describe('tiktoken rank files', () => {
  it('reject malformed lines, naming the file and line', () => {
    const good = 'IQ== 0\nIg== 1\n';
    expect(() => tokenizerFromTiktoken(`${good}not base64!! 2\n`, { source: 'r50k_base.tiktoken' })).toThrow(
      'r50k_base.tiktoken line 3: expected "<base64> <rank>", got "not base64!! 2"',
    );
    expect(() => tokenizerFromTiktoken(`${good}Iw==\n`, { source: 'x.tiktoken' })).toThrow(
      'x.tiktoken line 3: expected "<base64> <rank>", got "Iw=="',
    );
    expect(() => tokenizerFromTiktoken(`${good}Iw== -4\n`, { source: 'x.tiktoken' })).toThrow(
      'x.tiktoken line 3',
    );
    expect(() => tokenizerFromTiktoken(`${good}Iw== 1\n`, { source: 'x.tiktoken' })).toThrow(
      'x.tiktoken line 3: rank 1 was already given on line 2',
    );
    expect(() => tokenizerFromTiktoken(`${good}Iw== 7\n`, { source: 'x.tiktoken' })).toThrow(
      'rank 7 is beyond the 4 lines',
    );
    expect(() => tokenizerFromTiktoken(good, { source: 'x.tiktoken' })).toThrow(
      'x.tiktoken: no token for byte 0x00',
    );
  });

  it('reject a file with a rank missing', () => {
    const lines = ranksText.split('\n');
    lines.splice(5, 1);
    expect(() => tokenizerFromTiktoken(lines.join('\n'), { source: 'r50k_base.tiktoken' })).toThrow(
      'r50k_base.tiktoken: rank 5 is missing',
    );
  });
});

describe('Hugging Face tokenizer.json', () => {
  const merges: [string, string][] = [
    ['Ġ', 't'],
    ['h', 'e'],
    ['Ġt', 'he'],
  ];

  it('loads a byte-level BPE with merges given as "a b" strings or [a, b] pairs', () => {
    const json = tinyHfJson(merges);
    const tok = tokenizerFromHfJson(json);
    expect(tok.kind).toBe('bpe');
    expect(tok.encode(' the')).toEqual([258]);
    expect(tok.encode(' then')).toEqual([258, 110]);
    expect(tok.decode(tok.encode('héllo wörld'))).toBe('héllo wörld');
    const withStrings = JSON.parse(JSON.stringify(json));
    withStrings.model.merges = merges.map(([a, b]) => `${a} ${b}`);
    expect(tokenizerFromHfJson(withStrings).encode(' the')).toEqual([258]);
  });

  it('rejects malformed keys, naming them', () => {
    const malformed = (
      edit: (json: { [key: string]: unknown; model?: { [key: string]: unknown } }) => void,
    ) => {
      const json = JSON.parse(JSON.stringify(tinyHfJson(merges)));
      edit(json);
      return () => tokenizerFromHfJson(json, { source: 'bad.json' });
    };
    expect(
      malformed((j) => {
        j.model!.vocab = { ...(j.model!.vocab as object), 'a b': 259 };
      }),
    ).toThrow(
      'bad.json: key "model.vocab["a b"]": character U+0020 at index 1 is outside GPT-2\'s byte-to-unicode alphabet',
    );
    expect(
      malformed((j) => {
        j.model!.vocab = { ...(j.model!.vocab as object), zz: 'x' };
      }),
    ).toThrow('bad.json: key "model.vocab["zz"]": expected an integer from 0 to 259, found "x"');
    // Ids number the entries: one far beyond them would size the id table by a hostile file.
    expect(
      malformed((j) => {
        j.model!.vocab = { ...(j.model!.vocab as object), zz: 1e8 };
      }),
    ).toThrow('bad.json: key "model.vocab["zz"]": expected an integer from 0 to 259, found 100000000');
    expect(
      malformed((j) => {
        j.model!.merges = ['Ġ t', 'oops'];
      }),
    ).toThrow('bad.json: key "model.merges[1]": expected "left right" or ["left", "right"], found "oops"');
    expect(
      malformed((j) => {
        j.model!.merges = [['Ġ', 'nope']];
      }),
    ).toThrow('bad.json: key "model.merges[0]": "nope" is not in model.vocab');
    expect(
      malformed((j) => {
        j.model!.merges = 7;
      }),
    ).toThrow('bad.json: key "model.merges": expected an array, found 7');
    expect(
      malformed((j) => {
        j.model = undefined;
      }),
    ).toThrow('bad.json: key "model": expected an object, found nothing');
    expect(
      malformed((j) => {
        j.pre_tokenizer = { type: 'Whatever' };
      }),
    ).toThrow('bad.json: key "pre_tokenizer.type": "Whatever" is not supported by Loom');
    expect(
      malformed((j) => {
        j.model!.merges = [
          ['Ġ', 't'],
          ['Ġ', 'h'],
        ];
        j.model!.byte_fallback = true;
      }),
    ).toThrow('bad.json: key "model.merges[1]": the merged token "Ġh" is not in model.vocab');
    expect(() => tokenizerFromHfJson('{"model": ', { source: 'bad.json' })).toThrow(
      'bad.json: not valid JSON',
    );
  });
});

describe('Loom tokenizer JSON', () => {
  const gpt2 = tokenizerFromTiktoken(ranksText);
  const kinds: [string, () => Tokenizer][] = [
    ['bpe (ranks, from tiktoken)', () => gpt2],
    [
      'bpe (merges, from tokenizer.json)',
      () =>
        tokenizerFromHfJson(
          tinyHfJson([
            ['Ġ', 't'],
            ['h', 'e'],
            ['Ġt', 'he'],
          ]),
        ),
    ],
    ['bpe (merges, trained)', () => trainBpe(shakespeare.slice(0, 100_000), { vocabSize: 600 })],
    [
      'char',
      () => CharTokenizer.fromCorpus(shakespeare, { unknown: 'unk', specialTokens: ['<bos>'], bos: '<bos>' }),
    ],
    ['llama2c', () => loadTokenizer(readData('models/tok512.bin'))],
  ];

  it.each(kinds)('round-trips %s through JSON text', (_, make) => {
    const tok = make();
    const text = JSON.stringify(tok.toJSON());
    const bytes = utf8(text);
    expect(detectTokenizerFormat(bytes)).toBe('loom-json');
    const back = loadTokenizer(bytes, 'saved.json');
    expect(back.kind).toBe(tok.kind);
    expect(back.vocabSize).toBe(tok.vocabSize);
    expect(back.bos).toBe(tok.bos);
    expect(back.eos).toBe(tok.eos);
    expect(back.specialTokens).toEqual(tok.specialTokens);
    expect(JSON.stringify(back.toJSON())).toBe(text);
    const random = seededRandom(30);
    const samples = [...HARD_CASES.slice(0, 25), shakespeare.slice(0, 5000)];
    for (let i = 0; i < 200; i++) samples.push(randomText(random, 30));
    for (const sample of samples) {
      const input = tok.kind === 'char' ? sample.replace(/[^a-z ]/gi, '') : sample;
      expect(back.encode(input)).toEqual(tok.encode(input));
    }
    for (let id = 0; id < tok.vocabSize; id += 7) expect(back.idToToken(id)).toBe(tok.idToToken(id));
  });

  it('rejects malformed Loom JSON, naming the key', () => {
    const json = JSON.parse(JSON.stringify(CharTokenizer.fromCorpus('abc').toJSON()));
    expect(() => tokenizerFromJSON({ ...json, kind: 'word' }, 'x.json')).toThrow(
      'x.json: key "kind": expected one of "char", "bpe", "llama2c", "hf", found "word"',
    );
    expect(() => tokenizerFromJSON({ ...json, characters: ['a', 'bc'] }, 'x.json')).toThrow(
      'vocabulary entry 1 is "bc"; expected exactly one Unicode character',
    );
    expect(() => tokenizerFromJSON({ ...json, version: 2 }, 'x.json')).toThrow(
      'x.json: key "version": expected 1',
    );
    const bpe = JSON.parse(JSON.stringify(trainBpe('hello hello', { vocabSize: 260 }).toJSON()));
    bpe.tokens[3] = 'a b';
    expect(() => tokenizerFromJSON(bpe, 'y.json')).toThrow(
      'y.json: key "tokens[3]": expected bytes in GPT-2\'s byte-to-unicode alphabet',
    );
  });
});

describe('format detection', () => {
  it('recognises each format from its content', () => {
    expect(detectTokenizerFormat(utf8(ranksText.slice(0, 1000)))).toBe('tiktoken');
    expect(detectTokenizerFormat(utf8(JSON.stringify(tinyHfJson([]))))).toBe('hf-json');
    expect(detectTokenizerFormat(readData('models/tok512.bin'))).toBe('llama2c');
    expect(detectTokenizerFormat(utf8('{"format": "loom-tokenizer"}'))).toBe('loom-json');
    expect(detectTokenizerFormat(utf8('hello world'))).toBeUndefined();
    expect(() => loadTokenizer(utf8('hello'), 'notes.txt')).toThrow(
      'notes.txt: not a tokenizer file Loom recognises',
    );
  });
});
