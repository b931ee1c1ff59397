import { quantFormat } from '@loom/tensor';
import type { CpuStorage } from '../storage';
import { Q4K_BLOCK_BYTES } from '../wasm/q4k-dot-kernel';
import { Q4K_ROW_TILE } from '../wasm/q4k-rows-kernel';
import { Q6K_BLOCK_BYTES } from '../wasm/q6k-dot-kernel';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import { type KQuantType, kQuantXForm } from '../wasm/super-block-dot';
import { checkOperandSizes, dotRowsInto, forkJoinByOutput } from './by-output';
import { decodeQuantRow } from './decode-blocks';
import { dequantProductInto } from './dequant-product';
import { quantizeSuperBlocks } from './quantize-activations';

/** A K-quant product: x [rows, in] times W [out, in] of `type`, in = 256 · superBlocks. */
export interface KQuantProduct {
  readonly type: KQuantType;
  readonly rows: number;
  readonly out: number;
  readonly superBlocks: number;
}

/** Values per super-block. */
const SUPER = 256;
/** Single-thread speed used to decide on threads, in multiply-adds per microsecond (about the Q4_0 kernel's). */
const MACS_PER_MICRO = 4_000;

/**
 * Each K-quant type's kernel, bytes of codes per block, order of x in the i16 form, span of x's sums in the i8 form
 * (see kQuantXForm), and portable decoder.
 */
const KINDS = {
  q4_k: {
    kernel: 'q4k_dot',
    blockBytes: Q4K_BLOCK_BYTES,
  },
  q6_k: {
    kernel: 'q6k_dot',
    blockBytes: Q6K_BLOCK_BYTES,
  },
} as const satisfies Record<KQuantType, { kernel: string; blockBytes: number }>;

/**
 * out [rows, out] = x [rows, in] · Wᵀ for a Q4_K or Q6_K W (scales [out, scalesPerBlock · superBlocks] f32; quants
 * [out, words · superBlocks] i32; see QuantizedWeight), reading the blocks directly. In WebAssembly (every operand
 * in the heap) x is first quantized to int8 per super-block of 256, as llama.cpp's Q8_K: each value of x moves by at
 * most half its super-block's step, max|x| / 254; the integer dot products are split across threads by output.
 * Else JavaScript, exact at the storages' precision.
 */
export function kQuantMatmulInto(
  settings: CpuKernelSettings,
  p: KQuantProduct,
  x: CpuStorage,
  scales: CpuStorage,
  quants: CpuStorage,
  out: CpuStorage,
): void {
  checkSizes(p, x, scales, quants, out);
  const runtime = kernelRuntime(settings);
  const addresses = [x.address, scales.address, quants.address, out.address];
  if (!runtime || addresses.some((a) => a === undefined)) {
    kQuantMatmulJs(p, x, scales, quants, out);
    return;
  }
  const [sa, qa, oa] = addresses.slice(1) as number[];
  const geometry = { type: p.type, rows: p.rows, out: p.out, blocks: p.superBlocks };
  if (dequantProductInto(runtime, settings.threads, geometry, addresses as number[])) return;
  const x8 = quantizeSuperBlocks(runtime, x, p.rows * p.superBlocks, p.type, kQuantXForm(runtime.features));
  if (x8 === undefined) {
    kQuantMatmulJs(p, x, scales, quants, out);
    return;
  }
  const { blockBytes } = KINDS[p.type];
  // Many rows of x against Q4_K with byte dot products: the kernel that brings each block's nibbles out once per tile.
  const manyRows = p.type === 'q4_k' && runtime.features.byteDot !== 'none' && p.rows >= Q4K_ROW_TILE;
  const kernel = manyRows ? 'q4k_rows_dot' : KINDS[p.type].kernel;
  const scaleBytes = 4 * quantFormat(p.type).scales;
  const micros = (p.rows * p.out * p.superBlocks * SUPER) / MACS_PER_MICRO;
  forkJoinByOutput(runtime, settings.threads, kernel, micros, p.out, (j0, j1) => {
    const weight = [sa + j0 * p.superBlocks * scaleBytes, qa + j0 * p.superBlocks * blockBytes, oa + j0 * 4];
    return [p.rows, j1 - j0, p.superBlocks, x8.codes, x8.scales, ...weight, p.out * 4];
  });
}

/** Throws unless the storages hold what `p` describes (the kernels trust these sizes). */
function checkSizes(p: KQuantProduct, x: CpuStorage, s: CpuStorage, q: CpuStorage, out: CpuStorage): void {
  const inner = p.superBlocks * SUPER;
  const format = quantFormat(p.type);
  checkOperandSizes('quantizedMatmul', `[${p.rows}, ${inner}] x ${p.type} [${p.out}, ${inner}]`, [
    ['x', x, p.rows * inner],
    ['scales', s, p.out * p.superBlocks * format.scales],
    ['quants', q, p.out * p.superBlocks * format.words],
    ['out', out, p.rows * p.out],
  ]);
}

/** The portable kernel: each row of W decoded once into f64 values, then dotted with every row of x. */
function kQuantMatmulJs(
  p: KQuantProduct,
  x: CpuStorage,
  scales: CpuStorage,
  quants: CpuStorage,
  out: CpuStorage,
): void {
  const words = quants.i32;
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.length * 4);
  const row = new Float64Array(p.superBlocks * SUPER);
  for (let j = 0; j < p.out; j++) {
    decodeQuantRow(p.type, bytes, scales.f32, j, row.length, row);
    dotRowsInto(x.f32, row, p.rows, out.f32, p.out, j);
  }
}
