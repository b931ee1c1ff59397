import type { HalfType } from '@loom/tensor';
import { dequantBlockFormat, dequantGemmKernelName, type PackedType } from '../wasm/dequant-gemm-kernel';
import type { KernelFeatures } from '../wasm/expr';
import { GEMM_WORK_BYTES } from '../wasm/gemm-kernel';
import { HALF_STEP, halfDotWorkBytes } from '../wasm/half-dot-kernel';
import type { WasmRuntime } from '../wasm/runtime';
import { forkJoinByOutput } from './by-output';

/** A product x [rows, in] times a block-quantized or 16-bit W [out, in] of `blocks` blocks of its type a row. */
export interface DequantProduct {
  readonly type: PackedType;
  readonly rows: number;
  readonly out: number;
  readonly blocks: number;
}

/** Rows of W decoded per panel: a multiple of gemm_few_t's blocks of 4 and 6 rows, about 150 KiB at in = 768. */
const PANEL_ROWS = 48;

/** Single-thread speed used to decide on threads, in multiply-adds per microsecond (about gemm_few_t's). */
const MACS_PER_MICRO = 12_000;

/** Rows of x from which a product may decode W (see decodesWeight). */
const DEQUANT_MIN_ROWS = 16;

/**
 * Rows of x from which a 16-bit product decodes W: the dot kernels widen W again for every row of x, which costs
 * binary16 about twice what it costs bfloat16. [rows, 768] x [2048, 768]ᵀ on one thread, dot kernel against decoded
 * panels (Node 26; Node 20 alike): bf16 4 rows 464 against 674 us, 16 rows 1558-1769 against 1800-1844, 32 rows 3091
 * against 2288; f16 2 rows 419 against 1159, 4 rows 927 against 714, 16 rows 3320-6129 against 1980-2125.
 */
const HALF_DECODE_MIN_ROWS: Readonly<Record<HalfType, number>> = { bf16: 16, f16: 4 };

/**
 * Whether a product decodes W to f32 and runs the f32 product (see dequantGemmKernel) where the dot kernels are
 * slower or cannot take it: a 16-bit W from HALF_DECODE_MIN_ROWS rows, or when the rows of x do not fit the dot
 * kernels' work area (halfDotWorkBytes); a quantized one from DEQUANT_MIN_ROWS rows, with
 * plain SIMD (i16 dot products) for every type, where the compiler spills wide loops (V8 before 13.6: Node 20's byte
 * dot products, 110M prefill of 128 on a Zen 4, Q4_K 176 against 260 tok/s, Q8_0 202 against 262), and for Q6_K and
 * Q8_0 even with relaxed SIMD's byte dot products (Node 26, Q8_0 252-270 against 277-292; Q4_K's and Q4_0's integer
 * kernels stay, 404 against 287 and 305-312 against 293-299).
 */
function decodesWeight({ type, rows, blocks }: DequantProduct, features: KernelFeatures): boolean {
  if (type === 'bf16' || type === 'f16') {
    return rows >= HALF_DECODE_MIN_ROWS[type] || halfDotWorkBytes(rows, blocks * HALF_STEP) > GEMM_WORK_BYTES;
  }
  const integerFaster =
    features.byteDot !== 'none' && features.wideTiles && (type === 'q4_k' || type === 'q4_0');
  return rows >= DEQUANT_MIN_ROWS && !integerFaster;
}

/**
 * out = x · Wᵀ with W decoded to f32 a panel at a time in each thread's work area, split across threads by output,
 * where that is the faster way (decodesWeight); `addresses` are x's, W's scales', W's codes' and out's in the heap.
 * False (nothing done) elsewhere, or when one row of W in f32 does not fit the work area.
 */
export function dequantProductInto(
  runtime: WasmRuntime,
  threads: number,
  p: DequantProduct,
  [x, scales, codes, output]: readonly number[],
): boolean {
  if (!decodesWeight(p, runtime.features)) return false;
  const format = dequantBlockFormat(p.type);
  const rowBytes = 4 * p.blocks * format.values;
  const panel = Math.min(PANEL_ROWS, Math.floor(GEMM_WORK_BYTES / rowBytes));
  if (panel < 1) return false;
  const micros = (p.rows * p.out * p.blocks * format.values) / MACS_PER_MICRO;
  forkJoinByOutput(runtime, threads, dequantGemmKernelName(p.type), micros, p.out, (j0, j1) => [
    p.rows,
    j1 - j0,
    p.blocks,
    panel,
    x,
    scales + j0 * p.blocks * format.scaleBytes,
    codes + j0 * p.blocks * format.codeBytes,
    output + j0 * 4,
    p.out,
  ]);
  return true;
}
