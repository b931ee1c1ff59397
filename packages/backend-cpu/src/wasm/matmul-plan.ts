import type { MatmulSpec } from '@loom/tensor';
import { MAX_CHUNKS } from '../threads/control';
import { PARALLEL_MIN_MICROS } from '../threads/fork-join';
import type { KernelFeatures } from './expr';
import { gemmConfig } from './gemm-kernel';
import type { KernelName } from './runtime';

/** Byte addresses of the operands in the WebAssembly heap. */
export interface Operands {
  readonly a: number;
  readonly b: number;
  readonly out: number;
  /** A bias [n] to add to every row of the output, if any (byte addresses, like the others). */
  readonly bias?: number;
}

/**
 * A matrix product mapped onto one kernel, splittable across threads along the batch or along
 * one extent of each matrix (rows or columns of the output).
 */
export interface Plan {
  readonly kernel: KernelName;
  readonly batch: number;
  /** Length of the splittable extent. */
  readonly extent: number;
  /** Pieces of the extent are multiples of this (register tile or vector width). */
  readonly align: number;
  /** Estimated time of the whole product on one thread, in microseconds. */
  readonly micros: number;
  /** Kernel arguments for batch entries [b0, b1) and extent [r0, r1), without the trailing work area. */
  args(b0: number, b1: number, r0: number, r1: number): number[];
  /** Whether the kernel adds the operands' bias itself (the packed gemm does; the caller adds it after the others). */
  readonly addsBias: boolean;
}

/**
 * Single-thread speeds (flops per microsecond) used to estimate a product's time: compute-bound
 * gemm, memory-bound gemv, and the few-row kernel in between. Gemv ran at 26 000-28 000 from the
 * caches (stories15M's layer weights, 288 x 288 to 288 x 768) and 17 000 from memory (its 32000 x 288
 * vocabulary projection) on a 2-core Zen 3, so a decode step splits only its large products.
 */
export const GEMM_FLOPS_PER_MICRO = 35_000;
const GEMV_FLOPS_PER_MICRO = 25_000;
const GEMM_FEW_FLOPS_PER_MICRO = 25_000;
/**
 * Products of at most this many rows (A not transposed, B transposed) go to `gemm_few_t`: it
 * beats the packed gemm there, most where B is a weight too large for the caches, and it packs
 * nothing. [m,768] x [768,768]ᵀ, one thread, packed against gemm_few_t: m 64 1717 -> 1447 us, 128
 * 3166 -> 2810, 256 5778 -> 5571, 384 8698 -> 8632, 768 17380 -> 22257; two threads: 64 807 -> 716,
 * 128 1522 -> 1439, 192 2156 -> 2202, 384 4181 -> 4419 (medians of 25 calls; `pnpm bench matmul` times the prefill's three shapes). The 110M shape's
 * prefill of 128 tokens: 2 threads 248.8-254.7 -> 234.9-239.6 ms, 1 thread 449.0 -> 422.5.
 */
const GEMM_FEW_MAX_ROWS = 128;

/**
 * Maps `spec` to a kernel: m = 1 and n = 1 products to the matrix-vector kernels (C = x W or,
 * transposed, C^T = B^T A^T), products of few rows times a transposed B (a weight stored
 * [out, in]) to `gemm_few_t`, everything else to the packed gemm. Requires k >= 1.
 */
export function planMatmul(spec: MatmulSpec, { a, b, out, bias }: Operands, features: KernelFeatures): Plan {
  const { batch, m, n, k, transA, transB } = spec;
  const aStep = spec.aBatchStride * 4;
  const bStep = spec.bBatchStride * 4;
  const flops = 2 * batch * m * n * k;
  const gemvMicros = flops / GEMV_FLOPS_PER_MICRO;
  if (m === 1 || n === 1) {
    // The vector operand is contiguous whatever its transpose flag; W is the other operand.
    const [x, xStep, w, wStep, cols, transW] =
      m === 1 ? [a, aStep, b, bStep, n, transB] : [b, bStep, a, aStep, m, !transA];
    const oStep = cols * 4;
    if (transW) {
      return {
        kernel: 'gemv_t',
        addsBias: false,
        batch,
        extent: cols,
        align: 1,
        micros: gemvMicros,
        args: (b0, b1, r0, r1) => [
          b1 - b0,
          xStep,
          wStep,
          oStep,
          r1 - r0,
          k,
          x + b0 * xStep,
          w + b0 * wStep + r0 * k * 4,
          out + b0 * oStep + r0 * 4,
        ],
      };
    }
    return {
      kernel: 'gemv_n',
      addsBias: false,
      batch,
      extent: cols,
      align: 4,
      micros: gemvMicros,
      args: (b0, b1, r0, r1) => [
        b1 - b0,
        xStep,
        wStep,
        oStep,
        r1 - r0,
        k,
        cols,
        x + b0 * xStep,
        w + b0 * wStep + r0 * 4,
        out + b0 * oStep + r0 * 4,
      ],
    };
  }
  if (m <= GEMM_FEW_MAX_ROWS && !transA && transB) {
    const oStep = m * n * 4;
    return {
      kernel: 'gemm_few_t',
      addsBias: false,
      batch,
      extent: n,
      align: 4,
      micros: flops / GEMM_FEW_FLOPS_PER_MICRO,
      args: (b0, b1, r0, r1) => [
        b1 - b0,
        aStep,
        bStep,
        oStep,
        m,
        r1 - r0,
        k,
        n,
        a + b0 * aStep,
        b + b0 * bStep + r0 * k * 4,
        out + b0 * oStep + r0 * 4,
      ],
    };
  }
  const [rsA, csA] = transA ? [1, m] : [k, 1];
  const [rsB, csB] = transB ? [1, k] : [n, 1];
  const cStep = m * n * 4;
  // Each thread packs all of the operand that is not split: split the longer output side.
  const splitRows = m >= n;
  const { mr, nv } = gemmConfig(features);
  return {
    kernel: 'gemm',
    addsBias: true,
    batch,
    extent: splitRows ? m : n,
    align: splitRows ? mr : 4 * nv,
    micros: flops / GEMM_FLOPS_PER_MICRO,
    args: (b0, b1, r0, r1) => {
      const [i0, rows, j0, cols] = splitRows ? [r0, r1 - r0, 0, n] : [0, m, r0, r1 - r0];
      return [
        b1 - b0,
        aStep,
        bStep,
        cStep,
        rows,
        cols,
        k,
        a + b0 * aStep + i0 * rsA * 4,
        rsA,
        csA,
        b + b0 * bStep + j0 * csB * 4,
        rsB,
        csB,
        out + b0 * cStep + (i0 * n + j0) * 4,
        n,
        bias === undefined ? 0 : bias + j0 * 4,
      ];
    },
  };
}

/**
 * Argument lists of the chunks of `plan` for `threads` threads: the whole product when it is
 * small or there is one thread; else pieces of the batch when it has enough entries, else of
 * the extent (aligned to the plan's tile). One chunk per thread, whatever the kernel:
 * - the matrix-vector and few-row kernels stream one contiguous range of the weight per thread; smaller chunks, claimed
 *   in turn, restart the stream at every chunk: on 2 threads a cold [1,768] x [768,768]^T took 188-201 us in 4 chunks
 *   per thread, 191-198 in 2 and 152-182 in 1, and the stories110M shape decoded 43.1-43.3 tok/s against 44.7-44.8
 *   (interleaved, Node 20);
 * - each chunk of the packed gemm packs all of the operand it does not split, a larger share with fused multiply-adds.
 *   Against 3 per thread (2 threads, Node 20, hot operands): [768,128]x[128,128]ᵀ 329 -> 264 us,
 *   [128,768]ᵀx[768,128] 349-715 -> 296 us, [768,128]x[512,128]ᵀ 974 -> 929 us; the reference training step
 *   70.4-70.5 -> 68.4-69.0 ms (bench train gpt2, interleaved); the 110M prefill unchanged.
 */
export function chunkPlan(plan: Plan, threads: number): number[][] {
  if (threads === 1 || plan.micros < PARALLEL_MIN_MICROS) return [plan.args(0, plan.batch, 0, plan.extent)];
  const wanted = Math.min(MAX_CHUNKS, threads);
  const chunks: number[][] = [];
  if (plan.batch >= 2 * threads) {
    const count = Math.min(wanted, plan.batch);
    for (let t = 0; t < count; t++) {
      chunks.push(
        plan.args(
          Math.floor((plan.batch * t) / count),
          Math.floor((plan.batch * (t + 1)) / count),
          0,
          plan.extent,
        ),
      );
    }
    return chunks;
  }
  const units = Math.ceil(plan.extent / plan.align);
  const count = Math.min(wanted, units);
  for (let t = 0; t < count; t++) {
    const r0 = Math.floor((units * t) / count) * plan.align;
    const r1 = Math.min(plan.extent, Math.floor((units * (t + 1)) / count) * plan.align);
    chunks.push(plan.args(0, plan.batch, r0, r1));
  }
  return chunks;
}
