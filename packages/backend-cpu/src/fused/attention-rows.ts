import { type AttentionSpec, type Shape, visibleKeys } from '@loom/tensor';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import { onHeap } from '../vectorised';
import { blockRowBytes } from '../wasm/attention-rows-kernel';
import { GEMM_WORK_BYTES } from '../wasm/gemm-kernel';
import { checkedArgs } from '../wasm/kernels';
import type { CpuKernelSettings } from '../wasm/settings';

/**
 * Single-thread speed of the row kernels for the estimate of a call's time, flops per microsecond (the products of a
 * query with its keys, on the training step's [12, 64, 4, 32]: about 23 000 measured for the forward's two, 27 000
 * for the backward's five).
 */
const FLOPS_PER_MICRO = 25_000;
/** Pair ranges per thread when split, so a late worker does not hold everyone up. */
const CHUNKS_PER_THREAD = 2;

/**
 * Bounds of `blocks` blocks of the T query rows with about equal numbers of visible keys (batch row 0's, from
 * `ranges`), so that a causal mask's later, longer rows do not all land in one chunk: [0, ..., T].
 */
function rowBlocksOf(ranges: Int32Array, t: number, blocks: number): number[] {
  let total = 0;
  for (let row = 0; row < t; row++) total += Math.max(0, ranges[2 * row + 1] - ranges[2 * row]) + 1;
  const bounds = [0];
  let seen = 0;
  for (let row = 0; row < t && bounds.length < blocks; row++) {
    seen += Math.max(0, ranges[2 * row + 1] - ranges[2 * row]) + 1;
    if (seen >= (total * bounds.length) / blocks) bounds.push(row + 1);
  }
  if (bounds[bounds.length - 1] !== t) bounds.push(t);
  return bounds;
}

/** The forward (q, k, v -> out) or the backward (q, k, v, grad -> dq, dk, dv flattened into out). */
export type RowsPass = 'forward' | 'backward';

/**
 * Attention (`attend_rows_f32`) or its gradients (`attend_grad_f32`) in blocks of query rows, the (batch row, kv head) pairs
 * split across threads; `storages` are q, k, v (and grad), `outs` the output (for the backward dq, dk and dv, which
 * it adds to). Returns false, computing nothing, when the kernels cannot run: off, an operand outside the heap, hd
 * not a multiple of 4, or a query's rows of keys beyond the thread's work area.
 */
export function attentionRowsInto(
  settings: CpuKernelSettings,
  pass: RowsPass,
  storages: readonly CpuStorage[],
  qShape: Shape,
  kShape: Shape,
  spec: AttentionSpec,
  outs: readonly CpuStorage[],
): boolean {
  const [b, t, h, hd] = qShape;
  const [, s, hkv] = kShape;
  // A row of each of the kernels' two block matrices (they hold as many rows as fit, up to BLOCK_ROWS).
  const workBytes = 2 * blockRowBytes(s);
  const heap = onHeap(settings, [...storages, ...outs]);
  if (!heap || hd % 4 !== 0 || hd === 0 || workBytes > GEMM_WORK_BYTES) return false;
  const ranges = new CpuStorage('i32', Math.max(1, 2 * b * t), false);
  try {
    const rangeAddress = ranges.address;
    if (rangeAddress === undefined) return false;
    let visible = 0;
    for (let bi = 0; bi < b; bi++) {
      for (let row = 0; row < t; row++) {
        const { start, end } = visibleKeys(spec, bi, row, s);
        ranges.i32[2 * (bi * t + row)] = start;
        ranges.i32[2 * (bi * t + row) + 1] = end;
        visible += Math.max(0, end - start);
      }
    }
    const [q, k, v, ...targets] = heap.addresses;
    const pairs = b * hkv;
    const kernel = pass === 'forward' ? 'attend_rows_f32' : 'attend_grad_f32';
    // Two products of hd per visible key and query head, five for the backward.
    const micros = ((pass === 'forward' ? 4 : 10) * h * visible * hd) / FLOPS_PER_MICRO;
    forkJoin(heap.runtime, settings.threads, kernel, micros, (threads) => {
      const wanted = threads === 1 ? 1 : threads * CHUNKS_PER_THREAD;
      const pairParts = Math.min(pairs, wanted);
      // The forward splits a pair's query rows too when there are few pairs (a backward's rows add to one dk, dv).
      const rowBlocks =
        pass === 'forward' ? rowBlocksOf(ranges.i32, t, Math.ceil(wanted / pairParts)) : [0, t];
      return Array.from({ length: pairParts }, (_, i) =>
        rowBlocks
          .slice(1)
          .map((end, block) =>
            checkedArgs(kernel, [
              q,
              k,
              v,
              ...targets,
              rangeAddress,
              Math.floor((pairs * i) / pairParts),
              Math.floor((pairs * (i + 1)) / pairParts),
              rowBlocks[block],
              end,
              hkv,
              h / hkv,
              t,
              hd,
              4 * s * hkv * hd,
              4 * h * hd,
              4 * hkv * hd,
              spec.scale,
            ]),
          ),
      ).flat();
    });
    return true;
  } finally {
    ranges.free();
  }
}
