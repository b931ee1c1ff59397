import { type AttentionSpec, type Shape, visibleKeys } from '@loom/tensor';
import { CpuStorage } from '../storage';
import { forkJoin, PARALLEL_MIN_MICROS } from '../threads/fork-join';
import { onHeap } from '../vectorised';
import { checkedArgs } from '../wasm/kernels';
import type { CpuKernelSettings } from '../wasm/settings';

/**
 * Single-thread speed of `attend_one_f32` used to estimate a call's time, flops per microsecond (measured at
 * 14 000 to 21 000 on a busy 2-core Zen 3 from 128 to 1024 keys): a stories15M-sized step stays on
 * one thread.
 */
const FLOPS_PER_MICRO = 15_000;
/** Head ranges per thread when split. */
const CHUNKS_PER_THREAD = 2;

/** The kernel's scores area [H, keys], kept between calls and grown on demand (one decode step after another). */
let scratch: CpuStorage | undefined;

/** A scores area of at least `length` values in the heap, or undefined when the heap is full. */
function scoresArea(length: number): CpuStorage | undefined {
  if (scratch && scratch.length >= length && scratch.address !== undefined) return scratch;
  scratch?.free();
  scratch = new CpuStorage('f32', Math.max(length, 2 * (scratch?.length ?? 0)), false);
  return scratch;
}

/**
 * Attention of one query per batch row (q [B, 1, H, hd], k and v [B, S, Hkv, hd]) by the
 * WebAssembly kernel `attend_one_f32`, rows and heads split across threads when the batch is long enough:
 * the decode step. Each row sees the keys `visibleKeys(spec, b, 0, S)` gives (every mask kind);
 * a row that sees none gets zeros. Returns false, computing nothing, when the kernel cannot run
 * (more than one query, hd not a multiple of 4, an operand outside the heap, the kernels off).
 */
export function decodeAttentionInto(
  settings: CpuKernelSettings,
  q: CpuStorage,
  qShape: Shape,
  k: CpuStorage,
  v: CpuStorage,
  kShape: Shape,
  spec: AttentionSpec,
  out: CpuStorage,
): boolean {
  const [b, t, h, hd] = qShape;
  const [, s, hkv] = kShape;
  const heap = onHeap(settings, [q, k, v, out]);
  if (t !== 1 || hd % 4 !== 0 || hd === 0 || !heap) return false;
  const { runtime } = heap;
  const [qAddress, kAddress, vAddress, outAddress] = heap.addresses;
  const group = h / hkv;
  const kvRowBytes = hkv * hd * 4;
  const ranges = Array.from({ length: b }, (_, row) => visibleKeys(spec, row, 0, s));
  const longest = Math.max(0, ...ranges.map(({ start, end }) => end - start));
  // Scores of every batch row, each head's weights then 1 / their sum: [B, H, longest + 1], so rows may run at once.
  const rowScores = h * (longest + 1);
  const scoresAddress = scoresArea(Math.max(1, b * rowScores))?.address;
  if (scoresAddress === undefined) return false;
  // Byte addresses of each row that sees a key; a row that sees none gets zeros.
  const jobs: { q: number; k: number; v: number; out: number; scores: number; count: number }[] = [];
  let micros = 0;
  ranges.forEach(({ start, end }, row) => {
    const count = end - start;
    const rowBytes = row * h * hd * 4;
    if (count <= 0) {
      out.f32.fill(0, row * h * hd, (row + 1) * h * hd);
      return;
    }
    const kvFirst = row * s * kvRowBytes + start * kvRowBytes;
    jobs.push({
      q: qAddress + rowBytes,
      k: kAddress + kvFirst,
      v: vAddress + kvFirst,
      out: outAddress + rowBytes,
      scores: scoresAddress + row * rowScores * 4,
      count,
    });
    micros += (4 * h * count * hd) / FLOPS_PER_MICRO;
  });
  if (settings.threads === 1 || micros < PARALLEL_MIN_MICROS) {
    // A decode step of a small model on this thread: the kernel directly, no job to describe.
    for (const job of jobs) {
      runtime.kernels.attend_one_f32(
        job.q,
        job.k,
        job.v,
        job.out,
        job.scores,
        0,
        h,
        group,
        job.count,
        hd,
        kvRowBytes,
        spec.scale,
        runtime.work.offset,
      );
    }
    return true;
  }
  // One fork-join for the whole batch: each row's heads in as many ranges as keep every thread busy.
  forkJoin(runtime, settings.threads, 'attend_one_f32', micros, (threads) => {
    const perRow = Math.min(h, Math.ceil((threads === 1 ? 1 : threads * CHUNKS_PER_THREAD) / jobs.length));
    return jobs.flatMap((job) =>
      Array.from({ length: perRow }, (_, i) =>
        checkedArgs('attend_one_f32', [
          job.q,
          job.k,
          job.v,
          job.out,
          job.scores,
          Math.floor((h * i) / perRow),
          Math.floor((h * (i + 1)) / perRow),
          group,
          job.count,
          hd,
          kvRowBytes,
          spec.scale,
        ]),
      ),
    );
  });
  return true;
}
