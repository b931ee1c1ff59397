import { bf16ToF32, f16ToF32, type HalfType } from '@loom/tensor';
import type { CpuStorage } from '../storage';
import { GEMM_WORK_BYTES } from '../wasm/gemm-kernel';
import { HALF_STEP, halfDotWorkBytes } from '../wasm/half-dot-kernel';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import { checkOperandSizes, dotRowsInto, forkJoinByOutput } from './by-output';
import { dequantProductInto } from './dequant-product';

/** The geometry of one product: x [rows, inner] times a 16-bit W [out, inner]. */
export interface HalfProduct {
  readonly type: HalfType;
  readonly rows: number;
  readonly out: number;
  readonly inner: number;
}

/**
 * The dot kernels' speed used to decide on threads, in multiply-adds per microsecond: below their real speed (one row
 * of x against [2048, 768] from memory, 4 600-11 000 a microsecond, Node 20 and 26), so the stories15M shape's
 * [1, 288] x [288, 288] products split across threads too, which paid: F16, 2 threads, Node 26, 1.59-1.76 ms a token
 * against 1.82-1.89 at 8 000.
 */
const MACS_PER_MICRO = 2_000;

/**
 * out [rows, out] = x [rows, inner] · Wᵀ for a 16-bit W (packed [out, inner / 2] i32, see HalfWeight), widening each
 * value as it is read: in WebAssembly (every operand in the heap, inner a multiple of 8) split across threads by
 * output, W widened into f32 panels once for a product of many rows (dequantProductInto), or of rows too long for
 * the dot kernels' work area, and row by row for few; else JavaScript. All are exact products of the widened values
 * (binary16's dot kernel: unless x holds magnitudes of 2^16 or more; see halfDotKernel); only the order of the f32
 * sums differs.
 */
export function halfMatmulInto(
  settings: CpuKernelSettings,
  p: HalfProduct,
  x: CpuStorage,
  packed: CpuStorage,
  out: CpuStorage,
): void {
  checkSizes(p, x, packed, out);
  const runtime = kernelRuntime(settings);
  const [xa, wa, oa] = [x.address, packed.address, out.address];
  if (!runtime || xa === undefined || wa === undefined || oa === undefined || p.inner % HALF_STEP !== 0) {
    halfMatmulJs(p, x, packed, out);
    return;
  }
  const product = { type: p.type, rows: p.rows, out: p.out, blocks: p.inner / HALF_STEP };
  if (dequantProductInto(runtime, settings.threads, product, [xa, wa, wa, oa])) return;
  if (halfDotWorkBytes(p.rows, p.inner) > GEMM_WORK_BYTES) {
    // Neither path takes it: a row of W in f32 is past the work area too.
    halfMatmulJs(p, x, packed, out);
    return;
  }
  const kernel = p.type === 'bf16' ? 'bf16_dot' : 'f16_dot';
  const micros = (p.rows * p.out * p.inner) / MACS_PER_MICRO;
  forkJoinByOutput(runtime, settings.threads, kernel, micros, p.out, (j0, j1) => [
    p.rows,
    j1 - j0,
    p.inner,
    xa,
    wa + j0 * p.inner * 2,
    oa + j0 * 4,
    p.out * 4,
  ]);
}

/** Throws unless the storages hold what `p` describes (the kernels trust these sizes). */
function checkSizes(p: HalfProduct, x: CpuStorage, packed: CpuStorage, out: CpuStorage): void {
  checkOperandSizes('halfMatmul', `[${p.rows}, ${p.inner}] x ${p.type} [${p.out}, ${p.inner}]`, [
    ['x', x, p.rows * p.inner],
    ['packed', packed, (p.out * p.inner) / 2],
    ['out', out, p.rows * p.out],
  ]);
}

/** The portable kernel: each row of W widened once, then dotted with every row of x. */
function halfMatmulJs(p: HalfProduct, x: CpuStorage, packed: CpuStorage, out: CpuStorage): void {
  const words = packed.i32;
  const halves = new Uint16Array(words.buffer, words.byteOffset, words.length * 2);
  const widen = p.type === 'bf16' ? bf16ToF32 : f16ToF32;
  const xv = x.f32;
  const ov = out.f32;
  for (let j = 0; j < p.out; j++) {
    dotRowsInto(xv, widen(halves.subarray(j * p.inner, (j + 1) * p.inner)), p.rows, ov, p.out, j);
  }
}
