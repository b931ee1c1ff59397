import type { MatmulSpec } from '@loom/tensor';
import type { Job } from '../threads/pool';
import { GEMM_CONFIG } from './kernel-module';
import type { KernelName } from './runtime';

/** Byte addresses of the operands in the WebAssembly heap. */
export interface Operands {
  readonly a: number;
  readonly b: number;
  readonly out: number;
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
  /** Floating-point operations of the whole product. */
  readonly flops: number;
  /** Smallest product worth splitting across threads, in flops. */
  readonly parallelFlops: number;
  /** Kernel arguments for batch entries [b0, b1) and extent [r0, r1). */
  args(b0: number, b1: number, r0: number, r1: number, work: number): number[];
}

/**
 * Below these sizes a worker round trip (a few microseconds when the worker is spinning, tens
 * when it sleeps) costs more than the halved compute saves. Measured with the matmul bench.
 */
const PARALLEL_GEMM_FLOPS = 2_000_000;
const PARALLEL_GEMV_FLOPS = 400_000;

/**
 * Maps `spec` to a kernel: m = 1 and n = 1 products to the matrix-vector kernels (C = x W or,
 * transposed, C^T = B^T A^T), everything else to the packed gemm. Requires k >= 1.
 */
export function planMatmul(spec: MatmulSpec, { a, b, out }: Operands): Plan {
  const { batch, m, n, k, transA, transB } = spec;
  const aStep = spec.aBatchStride * 4;
  const bStep = spec.bBatchStride * 4;
  const flops = 2 * batch * m * n * k;
  if (m === 1 || n === 1) {
    // The vector operand is contiguous whatever its transpose flag; W is the other operand.
    const [x, xStep, w, wStep, cols, transW] =
      m === 1 ? [a, aStep, b, bStep, n, transB] : [b, bStep, a, aStep, m, !transA];
    const oStep = cols * 4;
    if (transW) {
      return {
        kernel: 'gemv_t',
        batch,
        extent: cols,
        align: 1,
        flops,
        parallelFlops: PARALLEL_GEMV_FLOPS,
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
      batch,
      extent: cols,
      align: 4,
      flops,
      parallelFlops: PARALLEL_GEMV_FLOPS,
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
  const [rsA, csA] = transA ? [1, m] : [k, 1];
  const [rsB, csB] = transB ? [1, k] : [n, 1];
  const cStep = m * n * 4;
  // Each thread packs all of the operand that is not split: split the longer output side.
  const splitRows = m >= n;
  return {
    kernel: 'gemm',
    batch,
    extent: splitRows ? m : n,
    align: splitRows ? GEMM_CONFIG.mr : 4 * GEMM_CONFIG.nv,
    flops,
    parallelFlops: PARALLEL_GEMM_FLOPS,
    args: (b0, b1, r0, r1, work) => {
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
        work,
      ];
    },
  };
}

/**
 * Jobs for the threads owning `workAreas` (at most one each): the whole product when it is
 * small or there is one thread, else equal shares of the batch when it divides well, else of
 * the extent.
 */
export function splitPlan(plan: Plan, workAreas: readonly number[]): Job[] {
  const threads = workAreas.length;
  const job = (b0: number, b1: number, r0: number, r1: number, t: number): Job => ({
    kernel: plan.kernel,
    args: plan.args(b0, b1, r0, r1, workAreas[t]),
  });
  if (threads === 1 || plan.flops < plan.parallelFlops) return [job(0, plan.batch, 0, plan.extent, 0)];
  const jobs: Job[] = [];
  if (plan.batch >= threads && (plan.batch % threads === 0 || plan.batch >= 4 * threads)) {
    for (let t = 0; t < threads; t++) {
      const b0 = Math.floor((plan.batch * t) / threads);
      const b1 = Math.floor((plan.batch * (t + 1)) / threads);
      jobs.push(job(b0, b1, 0, plan.extent, t));
    }
    return jobs;
  }
  const chunk = Math.ceil(plan.extent / threads / plan.align) * plan.align;
  for (let t = 0; t < threads && t * chunk < plan.extent; t++) {
    jobs.push(job(0, plan.batch, t * chunk, Math.min(plan.extent, (t + 1) * chunk), t));
  }
  return jobs;
}
