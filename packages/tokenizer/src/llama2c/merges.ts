import { PairTable } from '../bpe/pair-table';
import { Heap } from '../heap';

/** run.c starts its best score at -1e10, so a merge scoring at or below it never happens. */
const MIN_SCORE = -1e10;

interface Candidate {
  readonly score: number;
  readonly left: number;
  readonly merged: number;
}

/**
 * run.c's merge loop for one llama2.c vocabulary: repeatedly merges the adjacent pair whose concatenated piece has
 * the highest score (the leftmost among equals) until no adjacent pair concatenates to a piece. run.c looks each
 * concatenation up by string; here the pairs are looked up by id in a table built once from the vocabulary.
 */
export class ScoredMerges {
  private readonly pairs: PairTable;
  private readonly heap = new Heap<Candidate>(
    (a, b) => a.score > b.score || (a.score === b.score && a.left < b.left),
  );
  // Scratch linked list over the tokens of one call, grown as needed.
  private next = new Int32Array(0);
  private prev = new Int32Array(0);
  private removed = new Uint8Array(0);

  /**
   * `idOfKey` maps each piece (one char per byte) to its id, the first id when pieces repeat; every id handed to
   * {@link merge} must be such an id, as run.c's lookups return.
   */
  constructor(
    keys: readonly string[],
    idOfKey: ReadonlyMap<string, number>,
    private readonly scores: Float32Array,
  ) {
    let splits = 0;
    for (const key of keys) splits += Math.max(0, key.length - 1);
    this.pairs = new PairTable(splits);
    for (const [key, merged] of idOfKey) {
      if (!(scores[merged] > MIN_SCORE)) continue;
      // Every way of cutting the piece in two known pieces is a pair that run.c merges into it.
      for (let cut = 1; cut < key.length; cut++) {
        const left = idOfKey.get(key.slice(0, cut));
        const right = idOfKey.get(key.slice(cut));
        // The priority slot is unused: the merge's score decides.
        if (left !== undefined && right !== undefined) this.pairs.add(left, right, 0, merged);
      }
    }
  }

  /**
   * Merges `ids[0, n)` as run.c does and appends the result to `out`, in O(n log n): a heap of candidate pairs over
   * a linked list instead of run.c's rescans, picking the same pair at every step (node indices keep their order,
   * so the smallest left index is the leftmost pair).
   */
  merge(ids: Int32Array, n: number, out: number[]): void {
    if (this.next.length < n) {
      this.next = new Int32Array(Math.max(n, 2 * this.next.length));
      this.prev = new Int32Array(this.next.length);
      this.removed = new Uint8Array(this.next.length);
    }
    const { next, prev, removed, heap, pairs } = this;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      removed[i] = 0;
    }
    for (let i = 0; i + 1 < n; i++) this.offer(ids, i, i + 1);
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
      const { left, merged } = top;
      const right = next[left];
      // Skip candidates made stale by an earlier merge.
      if (removed[left] || right >= n || pairs.merged(ids[left], ids[right]) !== merged) continue;
      ids[left] = merged;
      removed[right] = 1;
      const after = next[right];
      next[left] = after;
      if (after < n) prev[after] = left;
      if (prev[left] >= 0) this.offer(ids, prev[left], left);
      if (after < n) this.offer(ids, left, after);
    }
    for (let i = 0; i < n; i = next[i]) out.push(ids[i]);
  }

  private offer(ids: Int32Array, left: number, right: number): void {
    const merged = this.pairs.merged(ids[left], ids[right]);
    if (merged >= 0) this.heap.push({ score: this.scores[merged], left, merged });
  }
}
