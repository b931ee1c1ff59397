import { ByteSink } from '../byte-sink';
import { base64Encode } from '../formats/base64';
import type { Llama2cTokenizerJson } from '../formats/loom-json';
import { Heap } from '../heap';
import { checkId } from '../ids';
import { SpecialTokenBase } from '../special-token-base';
import { SpecialTokenSet } from '../special-tokens';
import type { SpecialToken, Tokenizer } from '../tokenizer';
import { bytesKey, utf8Decode, utf8DecodeStrict, utf8Encode } from '../utf8';
import type { Llama2cVocab } from './format';

/** llama2.c's fixed ids. */
const UNK = 0;
const BOS = 1;
const EOS = 2;
export const LLAMA2C_SPECIAL_TOKENS: readonly SpecialToken[] = [
  { text: '<unk>', id: UNK },
  { text: '<s>', id: BOS },
  { text: '</s>', id: EOS },
];

/** run.c starts its best score at -1e10, so a merge scoring at or below it never happens. */
const MIN_SCORE = -1e10;

const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/** The UTF-8 bytes of one code point as a one-char-per-byte key (a lone surrogate counts as U+FFFD). */
function codePointKey(codePoint: number): string {
  if (codePoint < 0x80) return String.fromCharCode(codePoint);
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) codePoint = 0xfffd;
  if (codePoint < 0x800) return String.fromCharCode(0xc0 | (codePoint >> 6), 0x80 | (codePoint & 63));
  if (codePoint < 0x10000) {
    return String.fromCharCode(
      0xe0 | (codePoint >> 12),
      0x80 | ((codePoint >> 6) & 63),
      0x80 | (codePoint & 63),
    );
  }
  return String.fromCharCode(
    0xf0 | (codePoint >> 18),
    0x80 | ((codePoint >> 12) & 63),
    0x80 | ((codePoint >> 6) & 63),
    0x80 | (codePoint & 63),
  );
}

interface Candidate {
  readonly score: number;
  readonly left: number;
  readonly merged: number;
}

/**
 * The tokenizer of llama2.c checkpoints (SentencePiece BPE with scores), behaving as llama2.c's `run.c`:
 * - encode: a leading space (the "dummy prefix") before non-empty text, one token per UTF-8 character or its
 *   `<0xXX>` byte tokens when the character is not in the vocabulary, then repeatedly the adjacent pair whose
 *   merged piece has the highest score (leftmost on ties) is merged. With `specialTokens: 'parse'` each stretch of
 *   text between special tokens gets the leading space, as SentencePiece's legacy mode does.
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
  private readonly keys: string[];
  private readonly idOfKey = new Map<string, number>();
  private readonly byteIds = new Int32Array(256).fill(-1);
  /** The byte a `<0xXX>` token stands for, else -1. */
  private readonly byteOf: Int16Array;

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
    this.keys = vocab.pieces.map(bytesKey);
    this.byteOf = new Int16Array(this.vocabSize).fill(-1);
    this.keys.forEach((key, id) => {
      if (!this.idOfKey.has(key)) this.idOfKey.set(key, id);
      const byte = BYTE_PIECE.exec(key);
      if (byte !== null) {
        const value = Number.parseInt(byte[1], 16);
        this.byteOf[id] = value;
        if (this.byteIds[value] < 0) this.byteIds[value] = id;
      }
    });
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
    const ids: number[] = [space];
    for (let i = 0; i < text.length; ) {
      const codePoint = text.codePointAt(i)!;
      i += codePoint > 0xffff ? 2 : 1;
      const key = codePointKey(codePoint);
      const id = this.idOfKey.get(key);
      if (id !== undefined) {
        ids.push(id);
        continue;
      }
      for (let b = 0; b < key.length; b++) {
        const byte = key.charCodeAt(b);
        const byteId = this.byteIds[byte];
        if (byteId < 0) {
          const hex = byte.toString(16).toUpperCase().padStart(2, '0');
          throw new Error(
            `${this.source}: no <0x${hex}> byte token to encode ${JSON.stringify(String.fromCodePoint(codePoint))}; the vocabulary lacks byte fallback`,
          );
        }
        ids.push(byteId);
      }
    }
    this.merge(ids, out);
  }

  /** Merges by score with a heap over a linked list: O(n log n) instead of run.c's O(n^2), same result. */
  private merge(ids: number[], out: number[]): void {
    const n = ids.length;
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    const removed = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    const heap = new Heap<Candidate>((a, b) => a.score > b.score || (a.score === b.score && a.left < b.left));
    const offer = (left: number, right: number): void => {
      const merged = this.idOfKey.get(this.keys[ids[left]] + this.keys[ids[right]]);
      if (merged !== undefined && this.scores[merged] > MIN_SCORE)
        heap.push({ score: this.scores[merged], left, merged });
    };
    for (let i = 0; i + 1 < n; i++) offer(i, i + 1);
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
      const { left, merged } = top;
      const right = next[left];
      // Skip candidates made stale by an earlier merge.
      if (removed[left] || right >= n) continue;
      if (this.idOfKey.get(this.keys[ids[left]] + this.keys[ids[right]]) !== merged) continue;
      ids[left] = merged;
      removed[right] = 1;
      const after = next[right];
      next[left] = after;
      if (after < n) prev[after] = left;
      if (prev[left] >= 0) offer(prev[left], left);
      if (after < n) offer(left, after);
    }
    for (let i = 0; i < n; i = next[i]) out.push(ids[i]);
  }
}
