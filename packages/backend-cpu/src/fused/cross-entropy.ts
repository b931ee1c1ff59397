import type { FusedKernels } from '@loom/tensor';
import type { FloatArray } from '../precision';
import { CpuStorage } from '../storage';
import { forkJoin } from '../threads/fork-join';
import { onHeap, runRowKernel } from '../vectorised';
import type { KernelArgs } from '../wasm/kernels';
import type { CpuKernelSettings } from '../wasm/settings';
import { ROW_EXP_SUM_KERNEL, SOFTMAX_KERNEL } from '../wasm/softmax-kernel';
import type { CpuKernelContext } from './kernel-context';
import { rowExpSum, softmaxKernel } from './softmax';

/** Estimated cost of one logit of the row exp-sums, in microseconds (an exp and a few adds). */
const MICROS_PER_LOGIT = 0.002;

/**
 * Each row's log Σ e^x of logits [rows, cols], as max + log Σ e^(x - max): the parts from the WebAssembly
 * `row_exp_sum_f32` (rows split across threads) where the logits live in the heap, else in JavaScript.
 */
function logSumExps(
  settings: CpuKernelSettings,
  logits: CpuStorage,
  rows: number,
  cols: number,
): Float64Array {
  const out = new Float64Array(rows);
  const parts = new CpuStorage('f32', 2 * rows, false);
  try {
    const heap = onHeap(settings, [logits, parts]);
    if (heap && cols > 0) {
      const [x, at] = heap.addresses;
      forkJoin(
        heap.runtime,
        settings.threads,
        ROW_EXP_SUM_KERNEL,
        rows * cols * MICROS_PER_LOGIT,
        (threads) => {
          const count = Math.min(rows, 2 * threads);
          const chunks: KernelArgs<typeof ROW_EXP_SUM_KERNEL>[] = [];
          for (let c = 0; c < count; c++) {
            const [r0, r1] = [Math.floor((rows * c) / count), Math.floor((rows * (c + 1)) / count)];
            chunks.push([x + 4 * r0 * cols, at + 8 * r0, r1 - r0, cols]);
          }
          return chunks;
        },
      );
      const p = parts.f32;
      for (let r = 0; r < rows; r++) out[r] = p[2 * r] + Math.log(p[2 * r + 1]);
      return out;
    }
  } finally {
    parts.free();
  }
  for (let r = 0; r < rows; r++) {
    const { max, sum } = rowExpSum(logits.f32, r * cols, cols);
    out[r] = max + Math.log(sum);
  }
  return out;
}

/**
 * Mean of log Σ e^x - x[target] (= -log softmax(logits [N, V])[target]) over the rows whose target is not
 * `ignoreIndex`; a target outside [0, V) that is not ignored counts as a row with loss 0 (as the composite does).
 */
export function crossEntropy(
  settings: CpuKernelSettings,
  logits: CpuStorage,
  targets: Int32Array,
  vocab: number,
  ignoreIndex: number,
): number {
  const lse = logSumExps(settings, logits, targets.length, vocab);
  const x = logits.f32;
  let total = 0;
  let count = 0;
  for (let r = 0; r < targets.length; r++) {
    const target = targets[r];
    if (target === ignoreIndex) continue;
    count++;
    if (target >= 0 && target < vocab) total += lse[r] - x[r * vocab + target];
  }
  return total / Math.max(count, 1);
}

/**
 * The loss's gradient in place over `out`, which holds softmax(logits) [N, V]: each row that is not ignored becomes
 * (its softmax - onehot(target)) · grad / count, an ignored row 0.
 */
export function crossEntropyGradInPlace(
  out: FloatArray,
  targets: Int32Array,
  vocab: number,
  grad: number,
  ignoreIndex: number,
): void {
  let count = 0;
  for (const target of targets) if (target !== ignoreIndex) count++;
  const scale = grad / Math.max(count, 1);
  for (let r = 0; r < targets.length; r++) {
    const [start, end] = [r * vocab, (r + 1) * vocab];
    const target = targets[r];
    if (target === ignoreIndex) {
      out.fill(0, start, end);
      continue;
    }
    if (target >= 0 && target < vocab) out[start + target] -= 1;
    for (let i = start; i < end; i++) out[i] *= scale;
  }
}

/** The cross-entropy loss and its gradient: the row kernels (exp-sums, softmax) in WebAssembly, the rest in JavaScript. */
export function crossEntropyKernels(
  ctx: CpuKernelContext,
): Pick<FusedKernels, 'softmaxCrossEntropy' | 'softmaxCrossEntropyGrad'> {
  return {
    softmaxCrossEntropy: (logits, targets, ignoreIndex) =>
      ctx.out(1, (o) => {
        const vocab = logits.shape[1];
        o.f32[0] = crossEntropy(ctx.settings, ctx.get(logits), ctx.get(targets).i32, vocab, ignoreIndex);
      }),
    softmaxCrossEntropyGrad: (logits, targets, grad, ignoreIndex) =>
      ctx.out(logits.shape[0] * logits.shape[1], (o) => {
        const [rows, vocab] = logits.shape;
        if (!runRowKernel(ctx.settings, SOFTMAX_KERNEL, [ctx.get(logits)], [], o, rows, vocab)) {
          softmaxKernel(ctx.f32(logits), vocab, false, o.f32);
        }
        crossEntropyGradInPlace(o.f32, ctx.get(targets).i32, vocab, ctx.f32(grad)[0], ignoreIndex);
      }),
  };
}
