import { PreTrainedTokenizer } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { digitsSplit, punctuationSplit, whitespaceSplit } from '../src/hf/pre-tokenizers/char-class';
import { type SplitBehavior, splitPiece } from '../src/hf/pre-tokenizers/split';
import { onigurumaToJs, readPattern } from '../src/hf/regex';
import { bytesToUnicode, type Tokenizer, tokenizerFromHfJson } from '../src/index';
import { seededRandom } from './helpers';

/** Random text over `alphabet` (items may be several characters). */
function randomOver(random: () => number, alphabet: readonly string[], count: number): string[] {
  return Array.from({ length: count }, () => {
    let text = '';
    const length = Math.floor(random() * 25);
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
    return text;
  });
}

function expectReferenceAgrees(json: object, samples: readonly string[]): Tokenizer {
  const loom = tokenizerFromHfJson(json);
  const reference = new PreTrainedTokenizer(json, {});
  for (const text of samples) {
    const expected = reference.encode(text);
    const ids = loom.encode(text, { specialTokens: 'parse', addSpecialTokens: true });
    if (ids.join() !== expected.join()) expect({ text, ids }).toEqual({ text, ids: expected });
    if (ids.length === 0) continue;
    const decoded = reference.decode(expected, { clean_up_tokenization_spaces: false });
    if (loom.decode(ids) !== decoded) expect({ text, decoded: loom.decode(ids) }).toEqual({ text, decoded });
  }
  return loom;
}

const specialToken = (id: number, content: string, special = true) => ({
  id,
  content,
  special,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
});

describe('models against transformers.js on small tokenizer.json files', () => {
  const random = seededRandom(99);

  it('WordPiece with a BERT normalizer-free pipeline (NFD, Lowercase, BertPreTokenizer, BertProcessing)', () => {
    const vocab: Record<string, number> = {};
    const add = (token: string) => {
      vocab[token] ??= Object.keys(vocab).length;
    };
    for (const token of ['[PAD]', '[UNK]', '[CLS]', '[SEP]']) add(token);
    for (const char of 'abcdefgh.,!?0123') {
      add(char);
      add(`##${char}`);
    }
    for (const word of ['ab', 'abc', 'bad', 'cafe', '##ab', '##cd', '##efg', 'he', 'head', '12', '##23'])
      add(word);
    const json = {
      added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map((t, i) => specialToken(i, t)),
      normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }] },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      model: {
        type: 'WordPiece',
        unk_token: '[UNK]',
        continuing_subword_prefix: '##',
        max_input_chars_per_word: 9,
        vocab,
      },
      post_processor: { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    };
    const alphabet = [...'abcdefghABCx.,!? 0123', 'é', 'e\u0301', '  ', '\t', '[SEP]', 'cafe', 'head'];
    const loom = expectReferenceAgrees(json, randomOver(random, alphabet, 1500));
    expect(loom.encode('Head, cafx!', { addSpecialTokens: true })).toEqual([
      2,
      vocab.head,
      vocab[','],
      1,
      vocab['!'],
      3,
    ]);
    expect(loom.encode('abcdefghabc')).toEqual([1]); // past max_input_chars_per_word
  });

  const unigramJson = (byteFallback: boolean, prependScheme: 'always' | 'first') => {
    const score = seededRandom(5);
    const pieces = [
      '<unk>',
      '<s>',
      '</s>',
      '▁',
      ...'abcdeh',
      '▁a',
      '▁ab',
      'ab',
      'abc',
      'bc',
      'cd',
      '▁he',
      'he',
      'ea',
      'ead',
    ];
    const vocab: [string, number][] = pieces.map((piece, i) => [piece, i < 3 ? 0 : -1 - score() * 9]);
    if (byteFallback)
      for (let byte = 0; byte < 256; byte++)
        vocab.push([`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, 0]);
    const metaspace = { replacement: '▁', prepend_scheme: prependScheme, split: true };
    return {
      added_tokens: ['<unk>', '<s>', '</s>'].map((t, i) => specialToken(i, t)),
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', ...metaspace },
      model: { type: 'Unigram', unk_id: 0, vocab, byte_fallback: byteFallback },
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
        pair: [],
        special_tokens: { '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
      },
      decoder: byteFallback
        ? { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Metaspace', ...metaspace }] }
        : { type: 'Metaspace', ...metaspace },
    };
  };
  const unigramAlphabet = [...'abcdeh xyzé', 'ab', 'head', '  ', '<s>', '😀'];

  it('Unigram (Viterbi over scores) with Metaspace, unknown characters fused', () => {
    expectReferenceAgrees(unigramJson(false, 'always'), randomOver(random, unigramAlphabet, 1500));
    const loom = tokenizerFromHfJson(unigramJson(false, 'always'));
    expect(loom.encode('xyz a')).toEqual([3, 0, 10]); // ▁ then one unknown for "xyz", then ▁a
  });

  it('Unigram with Metaspace prepending only at the start of the text', () => {
    expectReferenceAgrees(unigramJson(false, 'first'), randomOver(random, unigramAlphabet, 1500));
    const loom = tokenizerFromHfJson(unigramJson(false, 'first'));
    expect(loom.encode('a<s>a', { specialTokens: 'parse' })).toEqual([
      loom.tokenToId('▁a'),
      1,
      loom.tokenToId('a'),
    ]);
  });

  it('Unigram with byte fallback (which transformers.js lacks): unknown text becomes its UTF-8 bytes', () => {
    const loom = tokenizerFromHfJson(unigramJson(true, 'first'));
    expect(loom.encode('yé')).toEqual(['▁', '<0x79>', '<0xC3>', '<0xA9>'].map((t) => loom.tokenToId(t)));
    expect(loom.decode(loom.encode('a yé'))).toBe('a yé');
  });
});

/** A byte-level BPE over single bytes plus `merges` (byte-to-unicode alphabet), with extra JSON fields. */
function byteLevelJson(merges: readonly [string, string][], extra: object = {}): { [key: string]: unknown } {
  const vocab: Record<string, number> = {};
  for (let byte = 0; byte < 256; byte++) vocab[bytesToUnicode(Uint8Array.of(byte))] = byte;
  for (const [a, b] of merges) vocab[a + b] = Object.keys(vocab).length;
  return {
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    decoder: { type: 'ByteLevel' },
    model: { type: 'BPE', vocab, merges: merges.map(([a, b]) => `${a} ${b}`) },
    ...extra,
  };
}

describe('added tokens', () => {
  const mask = (flags: object) => [{ ...specialToken(256, '<mask>', false), ...flags }];

  it('lstrip and rstrip swallow the white space around the token', () => {
    const left = tokenizerFromHfJson(byteLevelJson([], { added_tokens: mask({ lstrip: true }) }));
    expect(left.encode('a  <mask> b')).toEqual([97, 256, 32, 98]);
    const right = tokenizerFromHfJson(byteLevelJson([], { added_tokens: mask({ rstrip: true }) }));
    expect(right.encode('a <mask>  b')).toEqual([97, 32, 256, 98]);
  });

  it('single_word matches only between non-word characters', () => {
    const tok = tokenizerFromHfJson(byteLevelJson([], { added_tokens: mask({ single_word: true }) }));
    expect(tok.encode('x <mask>.')).toEqual([120, 32, 256, 46]);
    expect(tok.encode('x<mask>')).not.toContain(256);
  });

  it('normalized tokens match the normalized text; special ones only when parsing', () => {
    const json = byteLevelJson([], {
      normalizer: { type: 'Lowercase' },
      added_tokens: [{ ...specialToken(256, 'HeLLo', false), normalized: true }, specialToken(257, '<ctl>')],
    });
    const tok = tokenizerFromHfJson(json);
    expect(tok.encode('say HELLO')).toEqual([115, 97, 121, 32, 256]);
    expect(tok.encode('<ctl>')).toEqual([60, 99, 116, 108, 62]);
    expect(tok.encode('<ctl>', { specialTokens: 'parse' })).toEqual([257]);
    expect(tok.decode([256, 257])).toBe('HeLLo<ctl>');
    expect(tok.specialTokens).toEqual([{ text: '<ctl>', id: 257 }]);
  });
});

describe('BPE options', () => {
  it('merges with a continuing-subword prefix and an end-of-word suffix', () => {
    const vocab = { a: 0, '##b': 1, '##c</w>': 2, '##bc</w>': 3, '[UNK]': 4, ab: 5 };
    const json = {
      pre_tokenizer: { type: 'WhitespaceSplit' },
      model: {
        type: 'BPE',
        vocab,
        // A merge joins the left token and the right one without its prefix.
        merges: ['##b ##c</w>', 'a ##b'],
        continuing_subword_prefix: '##',
        end_of_word_suffix: '</w>',
        unk_token: '[UNK]',
        fuse_unk: true,
      },
    };
    const tok = tokenizerFromHfJson(json);
    expect(tok.encode('abc')).toEqual([0, 3]);
    expect(tok.encode('xyzc ab')).toEqual([4, 2, 0, 4]);
    const { ab: _, ...withoutAb } = vocab;
    const broken = { ...json, model: { ...json.model, vocab: withoutAb } };
    expect(() => tokenizerFromHfJson(broken, { source: 'b.json' })).toThrow(
      'b.json: key "model.merges[1]": the merged token "ab" is not in model.vocab',
    );
  });

  it('ignore_merges takes a whole piece that is in the vocabulary', () => {
    const merges: [string, string][] = [
      ['a', 'b'],
      ['ab', 'c'],
    ];
    const plain = byteLevelJson(merges);
    (plain.model as { vocab: Record<string, number> }).vocab.bc = 258;
    (plain.model as { vocab: Record<string, number> }).vocab.abcbc = 259;
    const ignoring = { ...plain, model: { ...(plain.model as object), ignore_merges: true } };
    expect(tokenizerFromHfJson(plain).encode('abcbc')).toEqual([257, 98, 99]);
    expect(tokenizerFromHfJson(ignoring).encode('abcbc')).toEqual([259]);
  });

  it('byte fallback for characters outside the vocabulary', () => {
    const vocab: Record<string, number> = { '<unk>': 0, a: 1, '▁': 2 };
    for (let byte = 0; byte < 256; byte++)
      vocab[`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + byte;
    const json = {
      normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      model: { type: 'BPE', vocab, merges: [], byte_fallback: true, unk_token: '<unk>' },
      decoder: {
        type: 'Sequence',
        decoders: [
          { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
          { type: 'ByteFallback' },
          { type: 'Fuse' },
        ],
      },
    };
    const tok = tokenizerFromHfJson(json);
    expect(tok.encode('a é')).toEqual([1, 2, 3 + 0xc3, 3 + 0xa9]);
    expect(tok.decode([1, 2, 3 + 0xc3, 3 + 0xa9])).toBe('a é');
    expect(tok.decode([3 + 0xc3])).toBe('\ufffd');
  });
});

describe('post-processors', () => {
  const template = {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [],
    special_tokens: { '<s>': { id: '<s>', ids: [256], tokens: ['<s>'] } },
  };
  const added = [specialToken(256, '<s>'), specialToken(257, '</s>')];

  it('apply only when addSpecialTokens asks', () => {
    const tok = tokenizerFromHfJson(byteLevelJson([], { added_tokens: added, post_processor: template }));
    expect(tok.encode('hi')).toEqual([104, 105]);
    expect(tok.encode('hi', { addSpecialTokens: true })).toEqual([256, 104, 105]);
  });

  it('RobertaProcessing and Sequence', () => {
    const roberta = { type: 'RobertaProcessing', cls: ['<s>', 256], sep: ['</s>', 257] };
    const sequence = { type: 'Sequence', processors: [{ type: 'ByteLevel' }, roberta] };
    for (const post of [roberta, sequence]) {
      const tok = tokenizerFromHfJson(byteLevelJson([], { added_tokens: added, post_processor: post }));
      expect(tok.encode('hi', { addSpecialTokens: true })).toEqual([256, 104, 105, 257]);
    }
  });
});

describe('pre-tokenizers', () => {
  it('Split behaviours, as the Rust tokenizers documentation shows them', () => {
    const dash = /-/gu;
    const cases: [SplitBehavior, string[]][] = [
      ['Removed', ['the', 'final', 'countdown']],
      ['Isolated', ['the', '-', 'final', '-', '-', 'countdown']],
      ['MergedWithPrevious', ['the-', 'final-', '-', 'countdown']],
      ['MergedWithNext', ['the', '-final', '-', '-countdown']],
      ['Contiguous', ['the', '-', 'final', '--', 'countdown']],
    ];
    for (const [behavior, expected] of cases)
      expect(splitPiece('the-final--countdown', dash, behavior)).toEqual(expected);
    expect(splitPiece('the-final--countdown', dash, 'Removed', true)).toEqual(['-', '-', '-']);
  });

  it('Digits, Whitespace and Punctuation', () => {
    expect(digitsSplit('abc123d٣٤', true)).toEqual(['abc', '1', '2', '3', 'd', '٣', '٤']);
    expect(digitsSplit('abc123d٣٤', false)).toEqual(['abc', '123', 'd', '٣٤']);
    expect(whitespaceSplit('Hey friend!  How are you?!? café_1')).toEqual([
      'Hey',
      'friend',
      '!',
      'How',
      'are',
      'you',
      '?!?',
      'café_1',
    ]);
    expect(punctuationSplit('Hey friend!!', 'Isolated')).toEqual(['Hey friend', '!', '!']);
    expect(punctuationSplit('Hey friend!!', 'Contiguous')).toEqual(['Hey friend', '!!']);
  });

  it('a Split pre-tokenizer with a string pattern in a Sequence with ByteLevel (add_prefix_space)', () => {
    const tok = tokenizerFromHfJson(
      byteLevelJson([], {
        pre_tokenizer: {
          type: 'Sequence',
          pretokenizers: [
            { type: 'Split', pattern: { String: ',' }, behavior: 'Removed', invert: false },
            { type: 'ByteLevel', add_prefix_space: true, use_regex: false },
          ],
        },
      }),
    );
    expect(tok.encode('a,b')).toEqual([32, 97, 32, 98]);
  });
});

describe('Oniguruma patterns in JavaScript', () => {
  const llama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

  it('translate case-insensitive groups and Unicode \\s for the Llama 3 pattern', () => {
    const pattern = readPattern({ Regex: llama3 }, 'x', 'p');
    const split = (text: string) => [...text.matchAll(pattern)].map((m) => m[0]);
    expect(split("I'M HERE'S 12345\ufeffx")).toEqual(['I', "'M", ' HERE', "'S", ' ', '123', '45', '\ufeffx']);
    expect(onigurumaToJs('(?i:[a-c]x)\\x{41}', 'x')).toBe('(?:[a-cA-C][xX])\\u{41}');
  });

  it('refuse what JavaScript cannot express, naming the key', () => {
    expect(() => readPattern({ Regex: 'a++' }, 'f.json', 'pre_tokenizer.pattern')).toThrow(
      'f.json: key "pre_tokenizer.pattern.Regex": the regex "a++" uses a possessive quantifier at index 2',
    );
    expect(() => readPattern({ Regex: '(?>ab)' }, 'f.json', 'p')).toThrow('an atomic group');
    expect(() => readPattern({ Regex: '(' }, 'f.json', 'p')).toThrow(
      'the regex does not compile in JavaScript',
    );
  });
});

describe('unsupported components', () => {
  it('are refused by name with their key path', () => {
    const load = (extra: object) => () => tokenizerFromHfJson(byteLevelJson([], extra), { source: 'x.json' });
    expect(load({ normalizer: { type: 'Precompiled' } })).toThrow(
      'x.json: key "normalizer.type": "Precompiled" is not supported by Loom; expected one of "NFC"',
    );
    expect(
      load({
        pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits' }, { type: 'UnicodeScripts' }] },
      }),
    ).toThrow('x.json: key "pre_tokenizer.pretokenizers[1].type": "UnicodeScripts" is not supported by Loom');
    expect(load({ decoder: { type: 'CTC' } })).toThrow('x.json: key "decoder.type": "CTC" is not supported');
    expect(load({ model: { type: 'WordLevel', vocab: {} } })).toThrow(
      'x.json: key "model.type": "WordLevel"',
    );
    expect(load({ post_processor: { type: 'Sequence', processors: [{ type: 'Nope' }] } })).toThrow(
      'x.json: key "post_processor.processors[0].type": "Nope" is not supported',
    );
  });
});
