import { mergeSymbols } from '../../bpe/merge';
import { PairTable } from '../../bpe/pair-table';
import {
  type JsonObject,
  jsonFail,
  readArray,
  readBoolean,
  readNumber,
  readOptionalString,
} from '../../formats/json-read';
import { utf8Encode } from '../../utf8';
import { type HfModel, PIECE_CACHE_LIMIT } from './model';
import { readMerge } from './read-merge';
import { byteFallbackIds, readVocab, requireToken } from './vocab';

/** The `model` shape of a BPE tokenizer.json. */
export interface BpeModelJson {
  readonly type: 'BPE';
  readonly vocab: { readonly [token: string]: number };
  /** `"left right"` strings or `["left", "right"]` pairs, highest priority first. */
  readonly merges: readonly (string | readonly [string, string])[];
  readonly unk_token?: string | null;
  readonly fuse_unk?: boolean;
  readonly byte_fallback?: boolean;
  readonly ignore_merges?: boolean;
  readonly continuing_subword_prefix?: string | null;
  readonly end_of_word_suffix?: string | null;
  readonly dropout?: number | null;
}

/** BPE as the Rust `tokenizers` crate runs it: characters (or bytes) merged by merge priority, leftmost first. */
class BpeModel implements HfModel {
  private readonly cache = new Map<string, number[]>();
  private symbols = new Int32Array(64);

  constructor(
    readonly vocab: ReadonlyMap<string, number>,
    private readonly pairs: PairTable,
    private readonly options: {
      readonly unk: number | undefined;
      readonly fuseUnk: boolean;
      readonly byteFallback: boolean;
      readonly ignoreMerges: boolean;
      readonly prefix: string;
      readonly suffix: string;
    },
  ) {}

  tokenize(piece: string, out: number[]): void {
    let ids = this.cache.get(piece);
    if (ids === undefined) {
      ids = this.merge(piece);
      if (this.cache.size >= PIECE_CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    for (let i = 0; i < ids.length; i++) out.push(ids[i]);
  }

  private push(count: number, id: number): number {
    if (count === this.symbols.length) {
      const grown = new Int32Array(count * 2);
      grown.set(this.symbols);
      this.symbols = grown;
    }
    this.symbols[count] = id;
    return count + 1;
  }

  private merge(piece: string): number[] {
    const { vocab, options } = this;
    if (options.ignoreMerges) {
      const whole = vocab.get(piece);
      if (whole !== undefined) return [whole];
    }
    let count = 0;
    /** Whether the last symbol is an unknown one that the next unknown character joins. */
    let unknownRun = false;
    for (let i = 0; i < piece.length; ) {
      const end = i + (piece.codePointAt(i)! > 0xffff ? 2 : 1);
      const char = piece.slice(i, end);
      const text = `${i > 0 ? options.prefix : ''}${char}${end === piece.length ? options.suffix : ''}`;
      i = end;
      const id = vocab.get(text);
      if (id !== undefined) {
        count = this.push(count, id);
        unknownRun = false;
        continue;
      }
      const bytes = options.byteFallback ? byteFallbackIds(utf8Encode(char), vocab) : undefined;
      if (bytes !== undefined) {
        for (const byte of bytes) count = this.push(count, byte);
        unknownRun = false;
      } else if (options.unk !== undefined && !(unknownRun && options.fuseUnk)) {
        count = this.push(count, options.unk);
        unknownRun = true;
      }
    }
    const ids: number[] = [];
    mergeSymbols(this.symbols, count, this.pairs, ids);
    return ids;
  }
}

/** Compiles a BPE `model` (the object at `path`); ids must be at most `maxId`. */
export function compileBpe(json: JsonObject, source: string, path: string, maxId: number): HfModel {
  const dropout =
    json.dropout === undefined || json.dropout === null
      ? 0
      : readNumber(json.dropout, source, `${path}.dropout`);
  if (dropout !== 0)
    jsonFail(
      source,
      `${path}.dropout`,
      'null or 0 (dropout is random; Loom encodes deterministically)',
      dropout,
    );
  const vocab = readVocab(json.vocab, source, `${path}.vocab`, maxId);
  const prefix = readOptionalString(
    json.continuing_subword_prefix,
    source,
    `${path}.continuing_subword_prefix`,
    '',
  )!;
  const suffix = readOptionalString(json.end_of_word_suffix, source, `${path}.end_of_word_suffix`, '')!;
  const merges = readArray(json.merges, source, `${path}.merges`);
  const pairs = new PairTable(merges.length);
  merges.forEach((entry, index) => {
    const where = `${path}.merges[${index}]`;
    const [left, right] = readMerge(entry, source, where);
    const idOf = (token: string, role: string): number => {
      const id = vocab.get(token);
      if (id === undefined) {
        throw new Error(
          `${source}: key "${where}": ${role} ${JSON.stringify(token)} is not in ${path}.vocab; ` +
            'each merge must join two vocabulary tokens into a vocabulary token',
        );
      }
      return id;
    };
    const merged = idOf(left + right.slice(prefix.length), 'the merged token');
    pairs.add(idOf(left, 'the left token'), idOf(right, 'the right token'), index, merged);
  });
  const unkToken = readOptionalString(json.unk_token, source, `${path}.unk_token`, undefined);
  return new BpeModel(vocab, pairs, {
    unk: unkToken === undefined ? undefined : requireToken(vocab, unkToken, source, `${path}.unk_token`),
    fuseUnk: readBoolean(json.fuse_unk, source, `${path}.fuse_unk`, false),
    byteFallback: readBoolean(json.byte_fallback, source, `${path}.byte_fallback`, false),
    ignoreMerges: readBoolean(json.ignore_merges, source, `${path}.ignore_merges`, false),
    prefix,
    suffix,
  });
}
