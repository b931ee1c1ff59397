/**
 * Partial selection: the k largest logits without sorting all of them. Small k keeps a min-heap
 * of the k largest seen (most values fail one comparison with its top); larger k uses
 * quickselect with a median-of-three pivot and a three-way partition (banned tokens make many
 * equal -Infinity values), falling back to a sort of the remaining range if pivots keep going wrong.
 */

/** Up to this k a heap beats quickselect: it reads the values once and copies nothing. */
const HEAP_SELECT_MAX_K = 1024;

function medianOfThree(a: number, b: number, c: number): number {
  return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
}

/** Restores the min-heap property below `i`. */
function siftDown(heap: Float64Array, i: number): void {
  const size = heap.length;
  const value = heap[i];
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && heap[child + 1] < heap[child]) child++;
    if (heap[child] >= value) break;
    heap[i] = heap[child];
    i = child;
  }
  heap[i] = value;
}

function kthLargestByHeap(values: Float32Array, k: number): number {
  const heap = Float64Array.from(values.subarray(0, k));
  for (let i = (k >>> 1) - 1; i >= 0; i--) siftDown(heap, i);
  for (let i = k; i < values.length; i++) {
    if (values[i] > heap[0]) {
      heap[0] = values[i];
      siftDown(heap, 0);
    }
  }
  return heap[0];
}

function kthLargestByQuickselect(values: Float32Array, k: number): number {
  const a = values.slice();
  const target = a.length - k; // index of the answer in ascending order
  let lo = 0;
  let hi = a.length - 1;
  let budget = 2 * Math.ceil(Math.log2(a.length + 1)) + 8;
  while (lo < hi) {
    if (budget-- === 0) {
      a.subarray(lo, hi + 1).sort();
      return a[target];
    }
    const pivot = medianOfThree(a[lo], a[(lo + hi) >>> 1], a[hi]);
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i <= gt) {
      const v = a[i];
      if (v < pivot) {
        a[i++] = a[lt];
        a[lt++] = v;
      } else if (v > pivot) {
        a[i] = a[gt];
        a[gt--] = v;
      } else {
        i++;
      }
    }
    // [lo, lt) < pivot, [lt, gt] = pivot, (gt, hi] > pivot
    if (target < lt) hi = lt - 1;
    else if (target > gt) lo = gt + 1;
    else return pivot;
  }
  return a[target];
}

/** The k-th largest value (k = 1 is the maximum), in O(n) on average; `values` is not modified. */
export function kthLargest(values: Float32Array, k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > values.length) {
    throw new RangeError(`kthLargest: k must be an integer in [1, ${values.length}], got ${k}`);
  }
  return k <= HEAP_SELECT_MAX_K ? kthLargestByHeap(values, k) : kthLargestByQuickselect(values, k);
}

/**
 * The ids of the `n` largest values in ascending id order; among values tied with the n-th
 * largest, the lowest ids win, so the choice is deterministic.
 */
export function largestIds(values: Float32Array, n: number): number[] {
  if (n >= values.length) return Array.from(values, (_, i) => i);
  const threshold = kthLargest(values, n);
  let above = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] > threshold) above++;
  }
  let tiesLeft = n - above;
  const ids: number[] = [];
  for (let i = 0; i < values.length; i++) {
    if (values[i] > threshold) ids.push(i);
    else if (values[i] === threshold && tiesLeft > 0) {
      ids.push(i);
      tiesLeft--;
    }
  }
  return ids;
}

/** Sorts token ids by value, largest first, ties by lowest id: the one token order used everywhere. */
export function sortByValueDescending(ids: number[], values: ArrayLike<number>): number[] {
  return ids.sort((a, b) => values[b] - values[a] || a - b);
}
