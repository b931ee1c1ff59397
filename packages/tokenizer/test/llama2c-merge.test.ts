import { describe, expect, it } from 'vitest';
import { Llama2cTokenizer, type Llama2cVocab, parseLlama2cTokenizer } from '../src/index';
import { randomText, randomTextWithSurrogates, readData, seededRandom } from './helpers';
import { runCEncoder } from './run-c-reference';

const tok512 = parseLlama2cTokenizer(readData('models/tok512.bin'), 'tok512.bin');
const utf8 = new TextDecoder('utf-8', { fatal: true });
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];

/** The pieces of `vocab` that are text and plain pieces (not <unk>, <s>, </s> or a byte token). */
function textPieces(vocab: Llama2cVocab): string[] {
  return vocab.pieces.slice(259).flatMap((piece) => {
    try {
      return [utf8.decode(piece)];
    } catch {
      return [];
    }
  });
}

/**
 * Random text built to make many merges: pieces of the vocabulary glued together, random Unicode (multi-byte,
 * characters outside the vocabulary, whitespace, lone surrogates), runs of one repeated character and long runs
 * without spaces.
 */
function mergeHeavyText(random: () => number, pieces: readonly string[]): string {
  let text = '';
  const parts = 1 + Math.floor(random() * 8);
  for (let part = 0; part < parts; part++) {
    const kind = random();
    if (kind < 0.35) {
      for (let i = Math.floor(random() * 8); i >= 0; i--) text += pick(random, pieces);
    } else if (kind < 0.6) {
      text += randomTextWithSurrogates(random, 16);
    } else if (kind < 0.8) {
      text += pick(random, [' ', 'a', 'e', 'l', '.', '\n', 'é', '日', '😀']).repeat(
        1 + Math.floor(random() * 40),
      );
    } else if (kind < 0.9) {
      for (let i = 50 + Math.floor(random() * 250); i > 0; i--) {
        text +=
          random() < 0.7
            ? pick(random, pieces).replaceAll(' ', '')
            : randomText(random, 3).replace(/\s/g, '');
      }
    } else {
      text += pick(random, pieces).repeat(1 + Math.floor(random() * 20));
    }
  }
  return text;
}

/**
 * A variation of tok512: scores rounded so that many tie, and new pieces made of two existing ones, some holding
 * spaces inside or at the end (so merges cross spaces), one repeating an existing piece, some never mergeable.
 */
function variedVocab(random: () => number): Llama2cVocab {
  const encoder = new TextEncoder();
  const pieces = [...tok512.pieces];
  const scores = Array.from(tok512.scores, (score) => Math.round(score / 40));
  const texts = textPieces(tok512);
  for (let i = 0; i < 120; i++) {
    const joined =
      pick(random, texts) + pick(random, [...texts, ' ', 'a ', ' .', 'e'].slice(random() < 0.5 ? 0 : -4));
    pieces.push(encoder.encode(joined));
    scores.push(random() < 0.05 ? -1e10 : Math.floor(random() * 12) - 8);
  }
  pieces.push(pieces[300]);
  scores.push(5);
  return { maxTokenLength: 16, pieces, scores: Float32Array.from(scores) };
}

describe('llama2.c encode against run.c written literally', () => {
  it('matches on 1500 random merge-heavy strings with tok512', () => {
    const tokenizer = new Llama2cTokenizer(tok512);
    const reference = runCEncoder(tok512);
    const pieces = textPieces(tok512);
    const random = seededRandom(512);
    for (let i = 0; i < 1500; i++) {
      const text = mergeHeavyText(random, pieces);
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(reference(text));
    }
  });

  it('matches on vocabularies with tied scores and pieces that hold spaces anywhere', () => {
    const random = seededRandom(7);
    for (let v = 0; v < 6; v++) {
      const vocab = variedVocab(random);
      const tokenizer = new Llama2cTokenizer(vocab);
      const reference = runCEncoder(vocab);
      const pieces = textPieces(vocab);
      for (let i = 0; i < 250; i++) {
        const text = mergeHeavyText(random, pieces);
        expect(tokenizer.encode(text), `vocabulary ${v}: ${JSON.stringify(text)}`).toEqual(reference(text));
      }
    }
  });

  it('merges across a space when the vocabulary has a piece holding one inside', () => {
    const encoder = new TextEncoder();
    const vocab: Llama2cVocab = {
      maxTokenLength: 7,
      pieces: [...tok512.pieces, encoder.encode('a '), encoder.encode('a b')],
      scores: Float32Array.from([...tok512.scores, 100, 100]),
    };
    const ids = new Llama2cTokenizer(vocab).encode('a b');
    expect(ids).toEqual([410, 513]);
    expect(ids).toEqual(runCEncoder(vocab)('a b'));
  });

  it('encodes correctly after an encode that failed on a missing byte token', () => {
    const pieces = [...tok512.pieces];
    pieces[0xe6 + 3] = new TextEncoder().encode('<0xZZ>');
    const vocab = { ...tok512, pieces };
    const tokenizer = new Llama2cTokenizer(vocab, 'no-e6.bin');
    expect(() => tokenizer.encode('Once upon 日')).toThrow(
      'no-e6.bin: no <0xE6> byte token to encode "日"; the vocabulary lacks byte fallback',
    );
    expect(tokenizer.encode('Once upon a time')).toEqual(runCEncoder(vocab)('Once upon a time'));
  });
});
