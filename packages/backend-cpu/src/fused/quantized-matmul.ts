import { QUANT_BLOCK, type QuantType, quantWordsPerBlock } from '@loom/tensor';
import type { CpuStorage } from '../storage';
import { activationForm, quantBlockBytes } from '../wasm/quant-dot-kernel';
import { type CpuKernelSettings, kernelRuntime } from '../wasm/settings';
import { checkOperandSizes, dotRowsInto, forkJoinByOutput } from './by-output';
import { decodeQuantRow } from './decode-blocks';
import { dequantProductInto } from './dequant-product';
import { kQuantMatmulInto } from './k-quant-matmul';
import { quantizeActivations } from './quantize-activations';

/** The geometry of one product: x [rows, in] times a quantized W [out, in]. */
export interface QuantizedProduct {
  readonly type: QuantType;
  readonly rows: number;
  readonly out: number;
  readonly blocks: number;
}

/** Single-thread speed used to decide on threads, in multiply-adds per microsecond (about gemv's). */
const MACS_PER_MICRO = 4_000;

/**
 * out [rows, out] = x [rows, in] · Wᵀ for a block-quantized W (scales [out, blocks] f32, quants [out, blocks · words]
 * i32; see QuantizedWeight), reading the blocks directly. In WebAssembly (every operand in the heap) x is first
 * quantized per 32-block to int8 as llama.cpp does, into a scratch block reused across calls, laid out for the
 * module's kernels (relaxed SIMD byte dot products where the engine has them, else i16 dot products; see
 * ActivationForm), and the integer dot products are split across threads by output: each value of x moves by at
 * most half its block's step, max|x| / 254, and the integer sums are exact. Else JavaScript, exact at the storages'
 * precision.
 */
export function quantizedMatmulInto(
  settings: CpuKernelSettings,
  p: QuantizedProduct,
  x: CpuStorage,
  scales: CpuStorage,
  quants: CpuStorage,
  out: CpuStorage,
): void {
  if (p.type === 'q4_k' || p.type === 'q6_k') {
    // K-quant super-blocks have their own kernels; `blocks` counts 32-value groups, eight per super-block.
    const product = { type: p.type, rows: p.rows, out: p.out, superBlocks: p.blocks / 8 };
    kQuantMatmulInto(settings, product, x, scales, quants, out);
    return;
  }
  checkSizes(p, x, scales, quants, out);
  const runtime = kernelRuntime(settings);
  const addresses = [x.address, scales.address, quants.address, out.address];
  if (!runtime || addresses.some((a) => a === undefined)) {
    quantizedMatmulJs(p, x, scales, quants, out);
    return;
  }
  const [sa, qa, oa] = addresses.slice(1) as number[];
  if (dequantProductInto(runtime, settings.threads, p, addresses as number[])) return;
  const x8 = quantizeActivations(runtime, x, p.rows * p.blocks, activationForm(p.type, runtime.features));
  if (x8 === undefined) {
    quantizedMatmulJs(p, x, scales, quants, out);
    return;
  }
  const kernel = p.type === 'q8_0' ? 'q8_0_dot' : 'q4_0_dot';
  const blockBytes = quantBlockBytes(p.type);
  const micros = (p.rows * p.out * p.blocks * QUANT_BLOCK) / MACS_PER_MICRO;
  forkJoinByOutput(runtime, settings.threads, kernel, micros, p.out, (j0, j1) => {
    const weight = [sa + j0 * p.blocks * 4, qa + j0 * p.blocks * blockBytes, oa + j0 * 4, p.out * 4];
    return [p.rows, j1 - j0, p.blocks, x8.codes, x8.scales, x8.bias, ...weight];
  });
}

/** Throws unless the storages hold what `p` describes (the kernels trust these sizes). */
function checkSizes(p: QuantizedProduct, x: CpuStorage, s: CpuStorage, q: CpuStorage, out: CpuStorage): void {
  const inner = p.blocks * QUANT_BLOCK;
  checkOperandSizes('quantizedMatmul', `[${p.rows}, ${inner}] x ${p.type} [${p.out}, ${inner}]`, [
    ['x', x, p.rows * inner],
    ['scales', s, p.out * p.blocks],
    ['quants', q, p.out * p.blocks * quantWordsPerBlock(p.type)],
    ['out', out, p.rows * p.out],
  ]);
}

/** The portable kernel: each row of W decoded once into f64 values, then dotted with every row of x. */
function quantizedMatmulJs(
  p: QuantizedProduct,
  x: CpuStorage,
  s: CpuStorage,
  q: CpuStorage,
  out: CpuStorage,
): void {
  const words = q.i32;
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.length * 4);
  const row = new Float64Array(p.blocks * QUANT_BLOCK);
  for (let j = 0; j < p.out; j++) {
    decodeQuantRow(p.type, bytes, s.f32, j, row.length, row);
    dotRowsInto(x.f32, row, p.rows, out.f32, p.out, j);
  }
}
