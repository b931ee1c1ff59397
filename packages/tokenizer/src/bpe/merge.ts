import { Heap } from '../heap';
import { NO_MERGE, type PairTable } from './pair-table';

/** Pieces up to this many bytes merge by rescanning (fast for short pieces); longer ones use a heap. */
const SHORT_PIECE = 48;

const shortIds = new Int32Array(SHORT_PIECE);
const shortPriorities = new Int32Array(SHORT_PIECE);

/**
 * Byte-pair merging: starting from one token per byte, repeatedly merges the adjacent pair with the lowest
 * priority (the leftmost among equals) until no adjacent pair has a merge. Appends the final ids to `out`.
 * O(n log n) for long pieces.
 */
export function bytePairMerge(
  bytes: Uint8Array,
  length: number,
  byteToId: Int32Array,
  pairs: PairTable,
  out: number[],
): void {
  const ids = length <= SHORT_PIECE ? shortIds : new Int32Array(length);
  for (let i = 0; i < length; i++) ids[i] = byteToId[bytes[i]];
  mergeSymbols(ids, length, pairs, out);
}

/**
 * The same merging from any starting symbols: `ids[0, length)` (overwritten). Appends the final ids to `out`.
 */
export function mergeSymbols(ids: Int32Array, length: number, pairs: PairTable, out: number[]): void {
  if (length <= SHORT_PIECE) mergeShort(ids, length, pairs, out);
  else mergeLong(ids, length, pairs, out);
}

function mergeShort(ids: Int32Array, length: number, pairs: PairTable, out: number[]): void {
  const priorities = shortPriorities;
  let n = length;
  for (let i = 0; i + 1 < n; i++) priorities[i] = pairs.priority(ids[i], ids[i + 1]);
  while (n > 1) {
    let best = NO_MERGE;
    let at = -1;
    for (let i = 0; i + 1 < n; i++) {
      if (priorities[i] < best) {
        best = priorities[i];
        at = i;
      }
    }
    if (at < 0) break;
    ids[at] = pairs.merged(ids[at], ids[at + 1]);
    for (let i = at + 1; i + 1 < n; i++) {
      ids[i] = ids[i + 1];
      priorities[i] = priorities[i + 1];
    }
    n--;
    if (at > 0) priorities[at - 1] = pairs.priority(ids[at - 1], ids[at]);
    if (at + 1 < n) priorities[at] = pairs.priority(ids[at], ids[at + 1]);
  }
  for (let i = 0; i < n; i++) out.push(ids[i]);
}

interface Candidate {
  readonly priority: number;
  readonly left: number;
  readonly right: number;
}

/** Candidate pairs of the long piece being merged (empty between calls). */
const heap = new Heap<Candidate>(
  (a, b) => a.priority < b.priority || (a.priority === b.priority && a.left < b.left),
);
/** Scratch linked list over the symbols of the long piece being merged, grown as needed. */
let next = new Int32Array(0);
let prev = new Int32Array(0);
let removed = new Uint8Array(0);

function mergeLong(ids: Int32Array, length: number, pairs: PairTable, out: number[]): void {
  if (next.length < length) {
    next = new Int32Array(Math.max(length, 2 * next.length));
    prev = new Int32Array(next.length);
    removed = new Uint8Array(next.length);
  }
  // A doubly linked list of symbols; node indices keep their order, so a smaller left index is further left.
  for (let i = 0; i < length; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    removed[i] = 0;
  }
  const offer = (left: number, right: number): void => {
    const priority = pairs.priority(ids[left], ids[right]);
    if (priority !== NO_MERGE) heap.push({ priority, left, right });
  };
  for (let i = 0; i + 1 < length; i++) offer(i, i + 1);
  for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
    const { left, right } = top;
    // Skip candidates made stale by an earlier merge.
    if (removed[left] || removed[right] || next[left] !== right) continue;
    if (pairs.priority(ids[left], ids[right]) !== top.priority) continue;
    ids[left] = pairs.merged(ids[left], ids[right]);
    removed[right] = 1;
    const after = next[right];
    next[left] = after;
    if (after < length) prev[after] = left;
    if (prev[left] >= 0) offer(prev[left], left);
    if (after < length) offer(left, after);
  }
  for (let i = 0; i < length; i = next[i]) out.push(ids[i]);
}
