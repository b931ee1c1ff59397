import {
  type JsonObject,
  jsonFail,
  readArray,
  readBoolean,
  readNumber,
  readOptionalId,
  readString,
} from '../../formats/json-read';
import { utf8Encode } from '../../utf8';
import { type HfModel, PIECE_CACHE_LIMIT } from './model';
import { byteFallbackIds } from './vocab';

/** The `model` shape of a Unigram tokenizer.json (SentencePiece unigram): pieces with log-probability scores. */
export interface UnigramModelJson {
  readonly type: 'Unigram';
  /** `[piece, score]` by id. */
  readonly vocab: readonly (readonly [string, number])[];
  readonly unk_id?: number | null;
  readonly byte_fallback?: boolean;
}

/** What SentencePiece charges an unknown character, below the lowest piece score. */
const UNKNOWN_PENALTY = 10;

/** The segmentation with the highest total score (Viterbi); unknown characters join into one unknown piece. */
class UnigramModel implements HfModel {
  private readonly cache = new Map<string, number[]>();
  private readonly unknownScore: number;
  private readonly longest: number;

  constructor(
    readonly vocab: ReadonlyMap<string, number>,
    private readonly scores: Float64Array,
    private readonly unk: number | undefined,
    private readonly byteFallback: boolean,
  ) {
    this.unknownScore = scores.reduce((min, score) => Math.min(min, score), 0) - UNKNOWN_PENALTY;
    let longest = 1;
    for (const piece of vocab.keys()) longest = Math.max(longest, piece.length);
    this.longest = longest;
  }

  tokenize(piece: string, out: number[]): void {
    let ids = this.cache.get(piece);
    if (ids === undefined) {
      ids = this.segment(piece);
      if (this.cache.size >= PIECE_CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    for (const id of ids) out.push(id);
  }

  private segment(text: string): number[] {
    const n = text.length;
    // best[i]: the highest score of a segmentation of text[0, i); from[i]: where its last piece starts;
    // token[i]: that piece's id, or -1 for an unknown character.
    const best = new Float64Array(n + 1).fill(Number.NEGATIVE_INFINITY);
    const from = new Int32Array(n + 1).fill(-1);
    const token = new Int32Array(n + 1);
    best[0] = 0;
    const offer = (start: number, end: number, id: number, score: number): void => {
      const candidate = best[start] + score;
      if (from[end] < 0 || candidate > best[end]) {
        best[end] = candidate;
        from[end] = start;
        token[end] = id;
      }
    };
    for (let start = 0; start < n; ) {
      const charEnd = start + (text.codePointAt(start)! > 0xffff ? 2 : 1);
      let single = false;
      for (let end = charEnd; end <= Math.min(n, start + this.longest); end++) {
        const id = this.vocab.get(text.slice(start, end));
        if (id === undefined) continue;
        offer(start, end, id, this.scores[id]);
        if (end === charEnd) single = true;
      }
      if (!single) offer(start, charEnd, -1, this.unknownScore);
      start = charEnd;
    }
    const pieces: [number, number, number][] = [];
    for (let end = n; end > 0; end = from[end]) {
      const last = pieces[pieces.length - 1];
      // Unknown characters next to each other make one unknown piece.
      if (token[end] === -1 && last !== undefined && last[2] === -1) last[0] = from[end];
      else pieces.push([from[end], end, token[end]]);
    }
    const ids: number[] = [];
    for (let i = pieces.length - 1; i >= 0; i--) {
      const [start, end, id] = pieces[i];
      if (id >= 0) {
        ids.push(id);
        continue;
      }
      const bytes = this.byteFallback
        ? byteFallbackIds(utf8Encode(text.slice(start, end)), this.vocab)
        : undefined;
      if (bytes !== undefined) ids.push(...bytes);
      else if (this.unk !== undefined) ids.push(this.unk);
      else {
        throw new Error(
          `encode: ${JSON.stringify(text.slice(start, end))} has no piece in this Unigram vocabulary and the model has no unk_id`,
        );
      }
    }
    return ids;
  }
}

/** Compiles a Unigram `model` (the object at `path`). */
export function compileUnigram(json: JsonObject, source: string, path: string): HfModel {
  const entries = readArray(json.vocab, source, `${path}.vocab`);
  const vocab = new Map<string, number>();
  const scores = new Float64Array(entries.length);
  entries.forEach((entry, id) => {
    const where = `${path}.vocab[${id}]`;
    const pair = readArray(entry, source, where);
    if (pair.length !== 2) jsonFail(source, where, 'a [piece, score] pair', entry);
    const piece = readString(pair[0], source, `${where}[0]`);
    if (!vocab.has(piece)) vocab.set(piece, id);
    scores[id] = readNumber(pair[1], source, `${where}[1]`);
  });
  const unk = readOptionalId(json.unk_id, source, `${path}.unk_id`);
  if (unk !== undefined && unk >= entries.length)
    jsonFail(source, `${path}.unk_id`, `an id below ${entries.length}`, unk);
  return new UnigramModel(
    vocab,
    scores,
    unk,
    readBoolean(json.byte_fallback, source, `${path}.byte_fallback`, false),
  );
}
