import { type JsonObject, readInteger, readOptionalString, readString } from '../../formats/json-read';
import { type HfModel, PIECE_CACHE_LIMIT } from './model';
import { readVocab, requireToken } from './vocab';

/** The `model` shape of a WordPiece tokenizer.json (BERT). */
export interface WordPieceModelJson {
  readonly type: 'WordPiece';
  readonly vocab: { readonly [token: string]: number };
  readonly unk_token: string;
  readonly continuing_subword_prefix?: string;
  readonly max_input_chars_per_word?: number;
}

/** Greedy longest-match-first: a word is its longest vocabulary prefix, then `##`-prefixed longest pieces. */
class WordPieceModel implements HfModel {
  private readonly cache = new Map<string, number[]>();

  constructor(
    readonly vocab: ReadonlyMap<string, number>,
    private readonly unk: number,
    private readonly prefix: string,
    private readonly maxChars: number,
  ) {}

  tokenize(piece: string, out: number[]): void {
    let ids = this.cache.get(piece);
    if (ids === undefined) {
      ids = this.split(piece);
      if (this.cache.size >= PIECE_CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    for (const id of ids) out.push(id);
  }

  private split(word: string): number[] {
    const chars = [...word];
    if (chars.length > this.maxChars) return [this.unk];
    const ids: number[] = [];
    for (let start = 0; start < chars.length; ) {
      let end = chars.length;
      let found: number | undefined;
      for (; end > start; end--) {
        found = this.vocab.get((start > 0 ? this.prefix : '') + chars.slice(start, end).join(''));
        if (found !== undefined) break;
      }
      if (found === undefined) return [this.unk];
      ids.push(found);
      start = end;
    }
    return ids;
  }
}

/** Compiles a WordPiece `model` (the object at `path`); ids must be at most `maxId`. */
export function compileWordPiece(json: JsonObject, source: string, path: string, maxId: number): HfModel {
  const vocab = readVocab(json.vocab, source, `${path}.vocab`, maxId);
  const unk = requireToken(
    vocab,
    readString(json.unk_token, source, `${path}.unk_token`),
    source,
    `${path}.unk_token`,
  );
  const prefix = readOptionalString(
    json.continuing_subword_prefix,
    source,
    `${path}.continuing_subword_prefix`,
    '##',
  )!;
  const maxChars =
    json.max_input_chars_per_word === undefined
      ? 100
      : readInteger(json.max_input_chars_per_word, source, `${path}.max_input_chars_per_word`, 1);
  return new WordPieceModel(vocab, unk, prefix, maxChars);
}
