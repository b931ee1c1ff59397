import { mergeSymbols } from '../bpe/merge';
import type { PairTable } from '../bpe/pair-table';

/** A token whose piece starts with a byte that no piece holds past its start: nothing ever merges onto its left. */
const CUT_BEFORE = 1;
/** A token whose piece ends with a byte that no piece holds before its end: nothing ever merges onto its right. */
const CUT_AFTER = 2;

/**
 * Feeds run.c's merge loop one segment at a time, cutting the token sequence where no merge can ever cross, so the
 * work and the scratch memory follow the segments (words, for a vocabulary whose pieces hold spaces only at their
 * start) rather than the whole text.
 *
 * Why a cut never changes the result. During run.c's loop every token covers a run of the initial tokens and its
 * piece is their pieces concatenated (a merge makes the piece `piece(x) + piece(y)`, found by that exact string).
 * A merge across the boundary between initial tokens a and b (a just before b) would join x, whose piece ends with
 * piece(a), and y, whose piece starts with piece(b), into a piece of the vocabulary; that piece holds the first byte
 * of piece(b) past its start (x is not empty) and the last byte of piece(a) before its end (y is not empty). When
 * no piece of the vocabulary holds that byte there (CUT_BEFORE b, or CUT_AFTER a), no such merge exists at any
 * step, so the boundary stays a boundary. Then the merges of different segments commute: run.c's step takes the
 * best pair of the whole sequence (highest score, leftmost among equals); it lies in one segment and is that
 * segment's own best pair (a pair of the segment scoring higher, or as high further left, would have been taken), and
 * merging it changes only the pairs with its two neighbours, which lie in the same segment. So each segment goes
 * through exactly the merges, in the same order, that run.c makes on that segment alone, and merging the segments
 * one by one and concatenating the results gives run.c's output.
 */
export class SegmentedMerge {
  private readonly cuts: Uint8Array;
  private ids = new Int32Array(1024);
  private length = 0;

  /**
   * `keys` are the pieces (one char per byte); pieces of any score count, which can only find fewer cuts. `pairs`
   * holds run.c's merges (see `scoredPairTable`).
   */
  constructor(
    keys: readonly string[],
    private readonly pairs: PairTable,
  ) {
    const inside = new Uint8Array(256);
    const beforeEnd = new Uint8Array(256);
    for (const key of keys) {
      for (let i = 0; i < key.length; i++) {
        if (i > 0) inside[key.charCodeAt(i)] = 1;
        if (i + 1 < key.length) beforeEnd[key.charCodeAt(i)] = 1;
      }
    }
    this.cuts = Uint8Array.from(keys, (key) =>
      key === ''
        ? 0
        : (inside[key.charCodeAt(0)] ? 0 : CUT_BEFORE) |
          (beforeEnd[key.charCodeAt(key.length - 1)] ? 0 : CUT_AFTER),
    );
  }

  /** Starts a sequence with its first token (dropping what a call that threw left behind). */
  start(id: number): void {
    this.ids[0] = id;
    this.length = 1;
  }

  /** Adds the next initial token, first merging the segment so far (into `out`) when a cut lies before it. */
  push(id: number, out: number[]): void {
    const length = this.length;
    if (length > 0 && (this.cuts[this.ids[length - 1]] & CUT_AFTER || this.cuts[id] & CUT_BEFORE)) {
      this.flush(out);
    } else if (length === this.ids.length) {
      const grown = new Int32Array(2 * length);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.length++] = id;
  }

  /** Merges the tokens pushed since the last cut and appends them to `out`. */
  flush(out: number[]): void {
    mergeSymbols(this.ids, this.length, this.pairs, out);
    this.length = 0;
  }
}
