import { CpuStorage } from '../storage';
import { type ActivationForm, activationBlockBytes } from '../wasm/quant-dot-kernel';
import { quantizeSuperXKernelName, quantizeXKernelName } from '../wasm/quantize-x-kernel';
import type { WasmRuntime } from '../wasm/runtime';
import { type KQuantType, type KQuantXForm, X_SUPER_BLOCK_BYTES } from '../wasm/super-block-dot';

/** Byte addresses, in the WebAssembly heap, of x's quantized blocks as a quantized product's kernel reads them. */
export interface QuantizedActivations {
  readonly codes: number;
  readonly scales: number;
  /** Per block -2 · sum of its codes (i32), for Q4_0's offset. */
  readonly bias: number;
}

/**
 * One heap block reused by every quantized product on this thread (products run one at a time): grown to the
 * largest x seen, never shrunk, so a decode step allocates nothing.
 */
let scratch: CpuStorage | undefined;

/** The reusable scratch holding at least `words` i32 words, or undefined when the heap cannot hold it. */
function scratchOf(words: number): CpuStorage | undefined {
  if (scratch === undefined || scratch.length < words) {
    scratch?.free();
    scratch = new CpuStorage('i32', words, false);
  }
  if (scratch.address !== undefined) return scratch;
  // The heap was full: a host array is no use to the kernels; the next call tries the heap again.
  scratch.free();
  scratch = undefined;
  return undefined;
}

/**
 * Each 32-block of x's `storage` (`blocks` of them, rows back to back; in the heap) quantized as llama.cpp quantizes
 * activations for Q8_0 products (see QUANTIZE_X: d = max|x| / 127, q = x / d rounded to nearest) into the reusable
 * scratch: the codes laid out as `form`, the scales d, and -2 · sum(q) per block. Undefined when the heap cannot hold
 * them.
 */
export function quantizeActivations(
  runtime: WasmRuntime,
  storage: CpuStorage,
  blocks: number,
  form: ActivationForm,
): QuantizedActivations | undefined {
  const codeBytes = blocks * activationBlockBytes(form);
  const target = scratchOf(codeBytes / 4 + 2 * blocks);
  const base = target?.address;
  const x = storage.address;
  if (base === undefined || x === undefined) return undefined;
  const activations = { codes: base, scales: base + codeBytes, bias: base + codeBytes + 4 * blocks };
  const { codes, scales, bias } = activations;
  runtime.kernels[quantizeXKernelName(form)](x, blocks, codes, scales, bias, runtime.work.offset);
  return activations;
}

/** Byte addresses, in the WebAssembly heap, of x's super-blocks quantized for a K-quant product's kernel. */
export interface QuantizedSuperBlocks {
  readonly codes: number;
  readonly scales: number;
}

/**
 * Each super-block of 256 values of x's `storage` (`blocks` of them, rows back to back; in the heap) quantized as
 * llama.cpp's Q8_K (see QUANTIZE_SUPER_X: d = max|x| / 127, q = x / d rounded to nearest) into the reusable scratch,
 * laid out for the `type` kernel reading `form`. Undefined when the heap cannot hold them.
 */
export function quantizeSuperBlocks(
  runtime: WasmRuntime,
  storage: CpuStorage,
  blocks: number,
  type: KQuantType,
  form: KQuantXForm,
): QuantizedSuperBlocks | undefined {
  const codeBytes = blocks * X_SUPER_BLOCK_BYTES;
  const target = scratchOf(codeBytes / 4 + blocks);
  const base = target?.address;
  const x = storage.address;
  if (base === undefined || x === undefined) return undefined;
  const quantized = { codes: base, scales: base + codeBytes };
  runtime.kernels[quantizeSuperXKernelName(type, form)](
    x,
    blocks,
    quantized.codes,
    quantized.scales,
    runtime.work.offset,
  );
  return quantized;
}
