import { QUANT_BLOCK } from '@loom/tensor';
import { CpuStorage } from '../storage';
import { type ActivationForm, activationBlockBytes } from '../wasm/quant-dot-kernel';

/** Byte addresses, in the WebAssembly heap, of x's quantized blocks as a quantized product's kernel reads them. */
export interface QuantizedActivations {
  readonly codes: number;
  readonly scales: number;
  /** Per block -2 · sum of its codes (i32), for Q4_0's offset. */
  readonly bias: number;
}

/**
 * Where value i of a block goes in the `i16-nibbles` form: even values 0..14, even 16..30, odd 1..15, odd 17..31
 * (the nibbles at bits 0, 4, 8 and 12 of the 16-bit lanes of a Q4_0 block's bytes).
 */
const NIBBLE_ORDER = Int32Array.from({ length: QUANT_BLOCK }, (_, i) => {
  const high = i >= 16 ? 1 : 0;
  const within = i % 16;
  return 16 * (within % 2) + 8 * high + (within >> 1);
});

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
 * Each 32-block of x's `storage` (`blocks` of them, rows back to back) quantized as llama.cpp quantizes activations for
 * Q8_0 products — d = max|x| / 127, q = round(x / d) half away from zero — into the reusable scratch: the codes
 * laid out as `form`, the scales d, and -2 · sum(q) per block. Undefined when the heap cannot hold them.
 */
export function quantizeActivations(
  storage: CpuStorage,
  blocks: number,
  form: ActivationForm,
): QuantizedActivations | undefined {
  const codeBytes = blocks * activationBlockBytes(form);
  const target = scratchOf(codeBytes / 4 + 2 * blocks);
  const base = target?.address;
  if (target === undefined || base === undefined) return undefined;
  // Views taken after the scratch is allocated, which may have grown the heap.
  const x = storage.f32;
  const words = target.i32;
  const bytes = new Uint8Array(words.buffer, words.byteOffset, codeBytes);
  const halves = new Int16Array(words.buffer, words.byteOffset, codeBytes / 2);
  const scales = new Float32Array(words.buffer, words.byteOffset + codeBytes, blocks);
  const bias = new Int32Array(words.buffer, words.byteOffset + codeBytes + 4 * blocks, blocks);
  for (let b = 0; b < blocks; b++) {
    const start = b * QUANT_BLOCK;
    let amax = 0;
    for (let i = 0; i < QUANT_BLOCK; i++) amax = Math.max(amax, Math.abs(x[start + i]));
    const scale = Math.fround(amax / 127);
    const inverse = scale === 0 ? 0 : 1 / scale;
    scales[b] = scale;
    let total = 0;
    for (let i = 0; i < QUANT_BLOCK; i++) {
      const v = x[start + i] * inverse;
      const q = v < 0 ? -Math.floor(0.5 - v) : Math.floor(v + 0.5);
      total += q;
      if (form === 'i16') halves[start + i] = q;
      else if (form === 'i16-nibbles') halves[start + NIBBLE_ORDER[i]] = q;
      else if (form === 'i8') bytes[start + i] = q & 255;
      else {
        bytes[2 * start + i] = Math.max(q, 0);
        bytes[2 * start + QUANT_BLOCK + i] = Math.max(-q, 0);
      }
    }
    bias[b] = -2 * total;
  }
  return { codes: base, scales: base + codeBytes, bias: base + codeBytes + 4 * blocks };
}
