import { ByteSink } from '../byte-sink';
import { base64Encode } from '../formats/base64';
import type { Llama2cTokenizerJson } from '../formats/tokenizer-json';
import { checkId } from '../ids';
import type { SpecialToken } from '../special-token';
import { SpecialTokenBase } from '../special-token-base';
import { SpecialTokenSet } from '../special-tokens';
import type { Tokenizer } from '../tokenizer';
import { bytesKey, utf8Decode, utf8DecodeStrict, utf8Encode } from '../utf8';
import type { Llama2cVocab } from './format';
import { scoredPairTable } from './merges';
import { SegmentedMerge } from './segments';

/** llama2.c's fixed ids. */
const UNK = 0;
const BOS = 1;
const EOS = 2;
export const LLAMA2C_SPECIAL_TOKENS: readonly SpecialToken[] = [
  { text: '<unk>', id: UNK },
  { text: '<s>', id: BOS },
  { text: '</s>', id: EOS },
];

const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/** The lead-byte marker of a UTF-8 sequence, by the number of continuation bytes after it. */
const UTF8_LEAD = [0, 0xc0, 0xe0, 0xf0];

/**
 * The tokenizer of llama2.c checkpoints (SentencePiece BPE with scores), behaving as llama2.c's `run.c`:
 * - encode: a leading space (the "dummy prefix") before non-empty text, one token per UTF-8 character or its
 *   `<0xXX>` byte tokens when the character is not in the vocabulary, then repeatedly the adjacent pair whose
 *   merged piece has the highest score (leftmost on ties) is merged. With `specialTokens: 'parse'` each stretch of
 *   text between special tokens gets the leading space, as SentencePiece's legacy mode does.
 *   The merging runs word by word where the vocabulary allows it (see {@link SegmentedMerge}), each part with the
 *   byte-pair merge loop of `bpe/merge.ts` (a heap, O(m log m) for m tokens, when the part is long), so encoding
 *   takes time and scratch memory linear in the text for text made of words, with the same result as run.c's
 *   quadratic loop.
 * - decode: byte tokens become their byte, a piece right after BOS loses its leading space, and BOS/EOS (control
 *   tokens) produce no text.
 */
export class Llama2cTokenizer extends SpecialTokenBase implements Tokenizer {
  readonly kind = 'llama2c';
  readonly vocabSize: number;
  readonly maxTokenLength: number;
  protected readonly specials: SpecialTokenSet;
  private readonly pieces: readonly Uint8Array[];
  private readonly scores: Float32Array;
  private readonly idOfKey = new Map<string, number>();
  /** The id of each code point that is a piece on its own. */
  private readonly charIds = new Map<number, number>();
  private readonly byteIds = new Int32Array(256).fill(-1);
  /** The byte a `<0xXX>` token stands for, else -1. */
  private readonly byteOf: Int16Array;
  private readonly segments: SegmentedMerge;

  constructor(
    vocab: Llama2cVocab,
    private readonly source = 'tokenizer.bin',
  ) {
    super();
    this.pieces = vocab.pieces;
    this.scores = vocab.scores;
    this.maxTokenLength = vocab.maxTokenLength;
    this.vocabSize = vocab.pieces.length;
    if (vocab.scores.length !== this.vocabSize) {
      throw new Error(
        `${source}: ${vocab.scores.length} scores for ${this.vocabSize} pieces; expected one score per piece`,
      );
    }
    this.specials = new SpecialTokenSet(LLAMA2C_SPECIAL_TOKENS, BOS, EOS, source);
    const keys = vocab.pieces.map(bytesKey);
    this.byteOf = new Int16Array(this.vocabSize).fill(-1);
    keys.forEach((key, id) => {
      if (!this.idOfKey.has(key)) {
        this.idOfKey.set(key, id);
        const text = utf8DecodeStrict(this.pieces[id]);
        const codePoint = text?.codePointAt(0);
        if (codePoint !== undefined && String.fromCodePoint(codePoint) === text)
          this.charIds.set(codePoint, id);
      }
      const byte = BYTE_PIECE.exec(key);
      if (byte !== null) {
        const value = Number.parseInt(byte[1], 16);
        this.byteOf[id] = value;
        if (this.byteIds[value] < 0) this.byteIds[value] = id;
      }
    });
    this.segments = new SegmentedMerge(keys, scoredPairTable(keys, this.idOfKey, this.scores));
  }

  override get bos(): number {
    return BOS;
  }

  override get eos(): number {
    return EOS;
  }

  decode(ids: ArrayLike<number>): string {
    return utf8Decode(this.decodeBytes(ids));
  }

  decodeBytes(ids: ArrayLike<number>, previous?: number): Uint8Array {
    const sink = new ByteSink(ids.length * 4);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      checkId(id, this.vocabSize, 'decode');
      const after = i > 0 ? ids[i - 1] : previous;
      if (id === BOS || id === EOS) continue;
      const byte = this.byteOf[id];
      if (byte >= 0) {
        sink.pushByte(byte);
        continue;
      }
      const piece = this.pieces[id];
      sink.push(after === BOS && piece[0] === 0x20 ? piece.subarray(1) : piece);
    }
    return sink.bytes();
  }

  tokenToId(token: string): number | undefined {
    return this.specials.id(token) ?? this.idOfKey.get(bytesKey(utf8Encode(token)));
  }

  idToToken(id: number): string {
    checkId(id, this.vocabSize, 'idToToken');
    return this.specials.text(id) ?? utf8Decode(this.pieces[id]);
  }

  toJSON(): Llama2cTokenizerJson {
    const texts = this.pieces.map((piece) => utf8DecodeStrict(piece));
    const utf8 = texts.every((text) => text !== undefined);
    const scores = Array.from(this.scores);
    const bad = scores.findIndex((score) => !Number.isFinite(score));
    if (bad >= 0) {
      throw new Error(
        `${this.source}: token ${bad} has score ${scores[bad]}, which JSON cannot hold; expected finite scores`,
      );
    }
    return {
      format: 'loom-tokenizer',
      version: 1,
      kind: 'llama2c',
      maxTokenLength: this.maxTokenLength,
      pieceEncoding: utf8 ? 'utf8' : 'base64',
      pieces: utf8 ? texts.map((text) => text ?? '') : this.pieces.map(base64Encode),
      scores,
      specialTokens: this.specials.list.map(({ text, id }) => ({ text, id })),
      bos: BOS,
      eos: EOS,
    };
  }

  protected encodeText(text: string, out: number[]): void {
    const space = this.idOfKey.get(' ');
    if (space === undefined) {
      throw new Error(
        `${this.source}: the vocabulary has no " " piece, which llama2.c prepends to the text; this tokenizer cannot encode`,
      );
    }
    this.segments.start(space);
    for (let i = 0; i < text.length; ) {
      let codePoint = text.codePointAt(i)!;
      i += codePoint > 0xffff ? 2 : 1;
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) codePoint = 0xfffd;
      const id = this.charIds.get(codePoint);
      if (id !== undefined) this.segments.push(id, out);
      else this.pushBytes(codePoint, out);
    }
    this.segments.flush(out);
  }

  /** Byte fallback: the `<0xXX>` tokens of the code point's UTF-8 bytes. */
  private pushBytes(codePoint: number, out: number[]): void {
    const tail = codePoint < 0x80 ? 0 : codePoint < 0x800 ? 1 : codePoint < 0x10000 ? 2 : 3;
    this.pushByte(UTF8_LEAD[tail] | (codePoint >> (6 * tail)), codePoint, out);
    for (let k = tail - 1; k >= 0; k--) this.pushByte(0x80 | ((codePoint >> (6 * k)) & 63), codePoint, out);
  }

  private pushByte(byte: number, codePoint: number, out: number[]): void {
    const id = this.byteIds[byte];
    if (id < 0) {
      const hex = byte.toString(16).toUpperCase().padStart(2, '0');
      throw new Error(
        `${this.source}: no <0x${hex}> byte token to encode ${JSON.stringify(String.fromCodePoint(codePoint))}; the vocabulary lacks byte fallback`,
      );
    }
    this.segments.push(id, out);
  }
}
