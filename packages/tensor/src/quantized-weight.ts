import { where } from './elementwise';
import { concat } from './movement';
import { scope } from './scope';
import { showShape } from './shape';
import type { Tensor } from './tensor';

/**
 * Block-quantized weight formats (GGUF's Q8_0 and Q4_0): blocks of 32 consecutive values of a
 * row share one scale; a value is `scale · q`, with q an int8 (Q8_0) or a 4-bit code minus 8 (Q4_0).
 */
export type QuantType = 'q8_0' | 'q4_0';

/** Values per block: one scale each. */
export const QUANT_BLOCK = 32;

/** i32 words of packed codes per block: 32 bytes of int8 (Q8_0), 16 bytes of nibble pairs (Q4_0). */
export function quantWordsPerBlock(type: QuantType): number {
  return type === 'q8_0' ? 8 : 4;
}

/**
 * A weight [out, in] held quantized: `scales` f32 [out, in / 32], one per block, and `quants`
 * i32 [out, in / 32 · wordsPerBlock], the block codes packed little-endian into words — Q8_0: the
 * 32 int8 codes in order; Q4_0: 16 bytes whose low nibbles are values 0-15 of the block and high
 * nibbles values 16-31 (GGUF's order), each code minus 8. The same bytes as a GGUF block with its
 * f16 scale moved into the f32 `scales` tensor, so every kernel reads aligned words.
 */
export class QuantizedWeight {
  readonly type: QuantType;
  readonly scales: Tensor;
  readonly quants: Tensor;

  constructor(type: QuantType, scales: Tensor, quants: Tensor) {
    checkQuantized('QuantizedWeight', type, scales, quants);
    this.type = type;
    this.scales = scales;
    this.quants = quants;
  }

  /** The logical shape [out, in] of the weight. */
  get shape(): [number, number] {
    return [this.scales.shape[0], this.scales.shape[1] * QUANT_BLOCK];
  }

  /** Bytes of backend storage the weight holds. */
  get bytes(): number {
    return 4 * (this.scales.size + this.quants.size);
  }

  dispose(): void {
    this.scales.dispose();
    this.quants.dispose();
  }
}

/** Throws unless scales [out, blocks] f32 and quants [out, blocks · words] i32 describe a weight of `type`. */
export function checkQuantized(op: string, type: QuantType, scales: Tensor, quants: Tensor): void {
  if (type !== 'q8_0' && type !== 'q4_0') {
    throw new Error(`${op}: unknown quantization type ${String(type)}; expected 'q8_0' or 'q4_0'`);
  }
  if (scales.backend !== quants.backend) {
    throw new Error(`${op}: scales and quants live on different backends; move one with toBackend()`);
  }
  if (scales.dtype !== 'f32' || quants.dtype !== 'i32') {
    throw new Error(`${op}: expected f32 scales and i32 quants, got ${scales.dtype} and ${quants.dtype}`);
  }
  const words = quantWordsPerBlock(type);
  if (scales.rank !== 2 || quants.rank !== 2 || quants.shape[0] !== scales.shape[0]) {
    throw new Error(
      `${op}: expected scales [out, blocks] and quants [out, blocks·${words}], got ${showShape(scales.shape)} and ${showShape(quants.shape)}`,
    );
  }
  if (quants.shape[1] !== scales.shape[1] * words) {
    throw new Error(
      `${op}: ${type} quants must hold ${words} words per block: ${scales.shape[1]} blocks need ` +
        `[${scales.shape[0]}, ${scales.shape[1] * words}], got ${showShape(quants.shape)}`,
    );
  }
}

/** The unsigned base-`base` low digit of i32 words (exact for negative words, like a bit mask) and the rest. */
function splitDigit(words: Tensor, base: number): [digit: Tensor, rest: Tensor] {
  const r = words.sub(words.div(base).mul(base)); // in (-base, base): i32 division truncates
  const digit = where(r.lt(0), r.add(base), r);
  // words - digit is a multiple of base no smaller than -2^31: the division is exact.
  return [digit, words.sub(digit).div(base)];
}

/** The `count` base-`base` digits of each word, lowest first: [..., words] -> [..., words, count]. */
function digits(words: Tensor, base: number, count: number): Tensor {
  const parts: Tensor[] = [];
  let rest = words;
  for (let i = 0; i < count; i++) {
    const [digit, next] = splitDigit(rest, base);
    parts.push(digit.reshape([...digit.shape, 1]));
    rest = next;
  }
  return concat(parts, -1);
}

/**
 * The integer codes of a quantized weight as f32 values in block order, [out, blocks, 32]:
 * int8 values for Q8_0, nibble - 8 for Q4_0. Written with primitives (the composite's decoder).
 */
export function quantCodes(type: QuantType, quants: Tensor): Tensor {
  return scope(() => {
    const [out, words] = quants.shape;
    const blocks = words / quantWordsPerBlock(type);
    if (type === 'q8_0') {
      const bytes = digits(quants, 256, 4).reshape([out, blocks, QUANT_BLOCK]); // [out, blocks, 32]
      return where(bytes.ge(128), bytes.sub(256), bytes).cast('f32');
    }
    const nibbles = digits(quants, 16, 8).reshape([out, blocks, 4, 4, 2]); // [out, blocks, word, byte, lo/hi]
    // Value index within the block: hi · 16 + word · 4 + byte.
    const ordered = nibbles.permute([0, 1, 4, 2, 3]).reshape([out, blocks, QUANT_BLOCK]); // [out, blocks, 32]
    return ordered.sub(8).cast('f32');
  });
}

/** The weight widened to f32 [out, in]: scale · code per value (the reference the kernels are checked against). */
export function dequantize(type: QuantType, scales: Tensor, quants: Tensor): Tensor {
  return scope(() => {
    const [out, blocks] = scales.shape;
    const codes = quantCodes(type, quants); // [out, blocks, 32]
    return codes.mul(scales.reshape([out, blocks, 1])).reshape([out, blocks * QUANT_BLOCK]); // [out, in]
  });
}
