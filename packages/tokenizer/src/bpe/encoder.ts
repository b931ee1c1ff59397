import { ByteSink } from '../byte-sink';
import type { BpeTokenizerJson } from '../formats/tokenizer-json';
import { checkId } from '../ids';
import type { SpecialToken } from '../special-token';
import { SpecialTokenBase } from '../special-token-base';
import { SpecialTokenSet } from '../special-tokens';
import type { Tokenizer } from '../tokenizer';
import { bytesKey, utf8Decode, utf8DecodeStrict, utf8Encode, utf8EncodeInto } from '../utf8';
import { bytesToUnicode } from './byte-unicode';
import { bytePairMerge } from './merge';
import { PairTable } from './pair-table';
import { PieceTable } from './piece-table';
import { nextPieceEnd } from './pretokenize';

/**
 * How adjacent tokens merge.
 * - `ranks` (tiktoken files): a token's id is its rank; two adjacent tokens merge when their concatenated bytes
 *   are a token, the lowest rank first; a piece whose bytes are a token encodes as that token directly.
 * - `merges` (Hugging Face `tokenizer.json`, training): only the listed pairs merge, earlier entries first, into
 *   the token whose bytes are the two concatenated.
 */
export type BpeMerging =
  | { readonly kind: 'ranks' }
  | { readonly kind: 'merges'; readonly merges: readonly (readonly [number, number])[] };

export interface ByteLevelBpeSpec {
  /** Bytes of each id; `null` where a special token holds the id. Must include all 256 single bytes. */
  readonly tokens: readonly (Uint8Array | null)[];
  readonly merging: BpeMerging;
  readonly specialTokens: readonly SpecialToken[];
  readonly bos?: number;
  readonly eos?: number;
  /** Names the source in error messages (`r50k_base.tiktoken`). */
  readonly source: string;
}

/** Pieces cached before the piece cache is emptied and refilled. */
const CACHE_LIMIT = 1 << 17;

/** GPT-2-style byte-level BPE: GPT-2 pre-tokenisation, UTF-8 bytes, merges by rank. */
export class ByteLevelBpeTokenizer extends SpecialTokenBase implements Tokenizer {
  readonly kind = 'bpe';
  readonly vocabSize: number;
  protected readonly specials: SpecialTokenSet;
  private readonly tokenBytes: Uint8Array[];
  private readonly byteToId = new Int32Array(256).fill(-1);
  private readonly pairs: PairTable;
  /** Ranks mode only: text of every token that is valid UTF-8, to its id. */
  private readonly wholePiece: PieceTable | undefined;
  /** Pieces already merged, to their ids. */
  private readonly cache = new PieceTable();
  private scratch = new Uint8Array(1024);
  private tokenIds: Map<string, number> | undefined;

  constructor(private readonly spec: ByteLevelBpeSpec) {
    super();
    const { tokens, source } = spec;
    this.specials = new SpecialTokenSet(spec.specialTokens, spec.bos, spec.eos, source);
    this.vocabSize = Math.max(tokens.length, this.specials.maxId() + 1);
    this.tokenBytes = new Array(this.vocabSize);
    /** Token bytes as one-char-per-byte strings, to ids. */
    const idOfKey = new PieceTable(tokens.length);
    const keys: string[] = new Array(tokens.length);
    for (let id = 0; id < this.vocabSize; id++) {
      const bytes = id < tokens.length ? tokens[id] : null;
      const special = this.specials.text(id);
      if ((bytes === null) === (special === undefined)) {
        throw new Error(
          bytes === null
            ? `${source}: id ${id} is neither a token nor a special token; ids must run from 0 to ${this.vocabSize - 1} without gaps`
            : `${source}: id ${id} is both a token and the special token ${JSON.stringify(special)}; give the special token its own id`,
        );
      }
      if (bytes === null) {
        this.tokenBytes[id] = utf8Encode(special!);
        continue;
      }
      if (bytes.length === 0)
        throw new Error(`${source}: token ${id} has no bytes; every token needs at least one`);
      const key = bytesKey(bytes);
      const keyHash = PieceTable.hash(key, 0, key.length);
      const other = idOfKey.get(key, 0, key.length, keyHash);
      if (other >= 0) {
        throw new Error(
          `${source}: tokens ${other} and ${id} have the same bytes ${JSON.stringify(bytesToUnicode(bytes))}; each token must be distinct`,
        );
      }
      idOfKey.set(key, keyHash, [id]);
      keys[id] = key;
      this.tokenBytes[id] = bytes;
      if (bytes.length === 1) this.byteToId[bytes[0]] = id;
    }
    const missing = this.byteToId.indexOf(-1);
    if (missing >= 0) {
      const hex = missing.toString(16).toUpperCase().padStart(2, '0');
      throw new Error(
        `${source}: no token for byte 0x${hex}; a byte-level BPE vocabulary needs all 256 single bytes`,
      );
    }
    if (spec.merging.kind === 'ranks') {
      this.pairs = buildRankPairs(keys, idOfKey);
      this.wholePiece = new PieceTable(tokens.length);
      for (let id = 0; id < tokens.length; id++) {
        const bytes = tokens[id];
        const text = bytes === null ? undefined : utf8DecodeStrict(bytes);
        if (text !== undefined) this.wholePiece.set(text, PieceTable.hash(text, 0, text.length), [id]);
      }
    } else {
      this.pairs = buildMergePairs(spec.merging.merges, keys, idOfKey, source);
      this.wholePiece = undefined;
    }
  }

  decode(ids: ArrayLike<number>): string {
    return utf8Decode(this.decodeBytes(ids));
  }

  decodeBytes(ids: ArrayLike<number>): Uint8Array {
    const sink = new ByteSink(ids.length * 4);
    for (let i = 0; i < ids.length; i++) {
      checkId(ids[i], this.vocabSize, 'decode');
      sink.push(this.tokenBytes[ids[i]]);
    }
    return sink.bytes();
  }

  tokenToId(token: string): number | undefined {
    const special = this.specials.id(token);
    if (special !== undefined) return special;
    if (this.tokenIds === undefined) {
      this.tokenIds = new Map();
      for (let id = 0; id < this.vocabSize; id++) {
        if (this.specials.text(id) === undefined) this.tokenIds.set(bytesToUnicode(this.tokenBytes[id]), id);
      }
    }
    return this.tokenIds.get(token);
  }

  idToToken(id: number): string {
    checkId(id, this.vocabSize, 'idToToken');
    return this.specials.text(id) ?? bytesToUnicode(this.tokenBytes[id]);
  }

  toJSON(): BpeTokenizerJson {
    const { merging, tokens } = this.spec;
    const base = {
      format: 'loom-tokenizer',
      version: 1,
      kind: 'bpe',
      pattern: 'gpt2',
      tokens: tokens.map((bytes) => (bytes === null ? null : bytesToUnicode(bytes))),
      specialTokens: this.specials.list.map(({ text, id }) => ({ text, id })),
      bos: this.bos ?? null,
      eos: this.eos ?? null,
    } as const;
    return merging.kind === 'ranks'
      ? { ...base, merging: 'ranks' }
      : { ...base, merging: 'merges', merges: merging.merges.map(([a, b]) => [a, b]) };
  }

  protected encodeText(text: string, out: number[]): void {
    const { cache, wholePiece } = this;
    const n = text.length;
    for (let start = 0; start < n; ) {
      const end = nextPieceEnd(text, start);
      const hash = PieceTable.hash(text, start, end);
      let value = wholePiece === undefined ? -1 : wholePiece.get(text, start, end, hash);
      if (value === -1) value = cache.get(text, start, end, hash);
      if (value >= 0) {
        out.push(value);
      } else if (value < -1) {
        const ids = cache.list(value);
        for (let i = 0; i < ids.length; i++) out.push(ids[i]);
      } else {
        const piece = text.slice(start, end);
        const ids = this.encodePiece(piece);
        if (cache.size >= CACHE_LIMIT) cache.clear();
        cache.set(piece, hash, ids);
        for (let i = 0; i < ids.length; i++) out.push(ids[i]);
      }
      start = end;
    }
  }

  private encodePiece(piece: string): number[] {
    if (this.scratch.length < piece.length * 3) this.scratch = new Uint8Array(piece.length * 3);
    const length = utf8EncodeInto(piece, this.scratch);
    const ids: number[] = [];
    bytePairMerge(this.scratch, length, this.byteToId, this.pairs, ids);
    return ids;
  }
}

/** Ranks mode: every split of a token into two tokens is a merge, with the token's rank as priority. */
function buildRankPairs(keys: readonly string[], idOfKey: PieceTable): PairTable {
  let capacity = 0;
  for (const key of keys) if (key !== undefined) capacity += Math.max(0, key.length - 1);
  const pairs = new PairTable(capacity);
  keys.forEach((key, id) => {
    let prefixHash = PieceTable.HASH_SEED;
    for (let split = 1; split < key.length; split++) {
      prefixHash = PieceTable.hashStep(prefixHash, key.charCodeAt(split - 1));
      const left = idOfKey.get(key, 0, split, prefixHash);
      if (left < 0) continue;
      const right = idOfKey.get(key, split, key.length, PieceTable.hash(key, split, key.length));
      if (right >= 0) pairs.add(left, right, id, id);
    }
  });
  return pairs;
}

/** Merges mode: the listed pairs, priority = position in the list. */
function buildMergePairs(
  merges: readonly (readonly [number, number])[],
  keys: readonly string[],
  idOfKey: PieceTable,
  source: string,
): PairTable {
  const pairs = new PairTable(merges.length);
  merges.forEach(([left, right], index) => {
    for (const id of [left, right]) {
      if (keys[id] === undefined) {
        throw new Error(
          `${source}: merge ${index} uses id ${id}, which is not a regular token; merges must join two tokens of the vocabulary`,
        );
      }
    }
    const key = keys[left] + keys[right];
    const merged = idOfKey.get(key, 0, key.length, PieceTable.hash(key, 0, key.length));
    if (merged < 0) {
      throw new Error(
        `${source}: merge ${index} (${left} + ${right}) makes bytes that are not a token of the vocabulary; add the merged token or remove the merge`,
      );
    }
    pairs.add(left, right, index, merged);
  });
  return pairs;
}
