import { where } from './elementwise';
import { broadcastTo, concat, slice } from './movement';
import { scope } from './scope';
import { showShape } from './shape';
import type { Tensor } from './tensor';

/**
 * Block-quantized weight formats (GGUF's Q8_0, Q4_0, Q4_K and Q6_K). Q8_0 / Q4_0: blocks of 32 consecutive values
 * of a row share one scale; a value is `scale · q`, with q an int8 (Q8_0) or a 4-bit code minus 8 (Q4_0). Q4_K:
 * super-blocks of 256 values, eight sub-blocks of 32, with a super-block scale d and min dmin and a 6-bit scale s_j
 * and min m_j per sub-block; a value of sub-block j is `d · s_j · q − dmin · m_j`, q a 4-bit code. Q6_K:
 * super-blocks of 256 values, sixteen sub-blocks of 16, with a super-block scale d and an int8 scale s_j per
 * sub-block; a value of sub-block j is `d · s_j · (q − 32)`, q a 6-bit code.
 */
export type QuantType = 'q8_0' | 'q4_0' | 'q4_k' | 'q6_k';

/** Every QuantType, in the order error messages list them. */
const QUANT_TYPES: readonly QuantType[] = ['q8_0', 'q4_0', 'q4_k', 'q6_k'];

/** Values per block of Q8_0 / Q4_0 and per sub-block of Q4_K: every quantized row is a multiple of it. */
export const QUANT_BLOCK = 32;

/** How one type lays out a block: values it covers, f32 scales and i32 words of codes it holds. */
export interface QuantFormat {
  /** Values per block: 32, or 256 for the super-blocks of Q4_K and Q6_K. */
  readonly values: number;
  /** f32 scales per block in `scales`: the scale (Q8_0, Q4_0), d then dmin (Q4_K), or d (Q6_K). */
  readonly scales: number;
  /** i32 words per block in `quants`. */
  readonly words: number;
}

const FORMATS: Readonly<Record<QuantType, QuantFormat>> = {
  q8_0: { values: 32, scales: 1, words: 8 },
  q4_0: { values: 32, scales: 1, words: 4 },
  q4_k: { values: 256, scales: 2, words: 36 },
  q6_k: { values: 256, scales: 1, words: 52 },
};

/** The block layout of `type` (see QuantizedWeight). */
export function quantFormat(type: QuantType): QuantFormat {
  return FORMATS[type];
}

/** i32 words of packed codes per block: 8 (Q8_0), 4 (Q4_0), 36 (a Q4_K super-block), 52 (a Q6_K one). */
export function quantWordsPerBlock(type: QuantType): number {
  return FORMATS[type].words;
}

/**
 * A weight [out, in] held quantized, as f32 `scales` [out, blocks · scalesPerBlock] and i32 `quants`
 * [out, blocks · wordsPerBlock], the block bytes packed little-endian into words (see quantFormat):
 * - Q8_0: one scale per block of 32; the 32 int8 codes in order.
 * - Q4_0: one scale per block of 32; 16 bytes whose low nibbles are values 0-15 of the block and high nibbles
 *   values 16-31 (GGUF's order), each code minus 8.
 * - Q4_K: d then dmin per super-block of 256; 36 words: bytes 0-7 the sub-block scales s_0..s_7 and bytes 8-15 the
 *   mins m_0..m_7 (each the low 6 bits of its byte; GGUF packs them into 12 bytes, unpacked here so kernels read
 *   them as bytes), then GGUF's 128 bytes of nibbles: byte 32c + l holds value 64c + l in its low nibble and value
 *   64c + 32 + l in its high one (c = 0..3, l = 0..31). 152 bytes per 256 values, 4.75 bits a weight.
 * - Q6_K: d per super-block of 256; 52 words: bytes 0-15 the sub-block scales s_0..s_15 (int8), bytes 16-143
 *   GGUF's 128 bytes of low nibbles and bytes 144-207 its 64 bytes of high bit pairs (GGUF puts the scales after
 *   them, moved first here as in Q4_K). Value v = 128h + 32k + l (h = 0..1, k = 0..3, l = 0..31) takes its low
 *   nibble from low byte 64h + 32(k mod 2) + l (its low half for k < 2, high half else), its high bits from bits
 *   2k, 2k + 1 of high byte 32h + l, and its scale from s_(v / 16). 212 bytes per 256 values, 6.625 bits a weight.
 * A GGUF block with its f16 scales moved into the f32 `scales` tensor, so every kernel reads aligned words.
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
    return quantizedShape(this.type, this.scales.shape);
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

/** The weight shape [out, in] that scales of shape [out, blocks · scalesPerBlock] describe. */
export function quantizedShape(type: QuantType, scalesShape: readonly number[]): [number, number] {
  const f = FORMATS[type];
  return [scalesShape[0], (scalesShape[1] / f.scales) * f.values];
}

/** Throws unless scales [out, blocks · scalesPerBlock] f32 and quants [out, blocks · words] i32 describe a weight of `type`. */
export function checkQuantized(op: string, type: QuantType, scales: Tensor, quants: Tensor): void {
  if (!QUANT_TYPES.includes(type)) {
    throw new Error(
      `${op}: unknown quantization type ${String(type)}; expected one of ${QUANT_TYPES.map((t) => `'${t}'`).join(', ')}`,
    );
  }
  if (scales.backend !== quants.backend) {
    throw new Error(`${op}: scales and quants live on different backends; move one with toBackend()`);
  }
  if (scales.dtype !== 'f32' || quants.dtype !== 'i32') {
    throw new Error(`${op}: expected f32 scales and i32 quants, got ${scales.dtype} and ${quants.dtype}`);
  }
  const { scales: perBlock, words } = FORMATS[type];
  const what = perBlock === 1 ? 'blocks' : `blocks·${perBlock}`;
  if (scales.rank !== 2 || quants.rank !== 2 || quants.shape[0] !== scales.shape[0]) {
    throw new Error(
      `${op}: expected scales [out, ${what}] and quants [out, blocks·${words}], got ${showShape(scales.shape)} and ${showShape(quants.shape)}`,
    );
  }
  if (scales.shape[1] % perBlock !== 0) {
    throw new Error(
      `${op}: ${type} scales hold d and dmin per super-block, so their width must be even; got ${showShape(scales.shape)}`,
    );
  }
  const blocks = scales.shape[1] / perBlock;
  if (quants.shape[1] !== blocks * words) {
    throw new Error(
      `${op}: ${type} quants must hold ${words} words per block: ${blocks} blocks need ` +
        `[${scales.shape[0]}, ${blocks * words}], got ${showShape(quants.shape)}`,
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
export function digits(words: Tensor, base: number, count: number): Tensor {
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
 * The factors that multiply each scale of a quantized weight, [out, blocks, scalesPerBlock, valuesPerBlock]:
 * value v of block b is sum_k scales[b, k] · factors[b, k, v], linear in the scales. Q8_0: the int8 code; Q4_0: the
 * nibble minus 8; Q4_K: s_j · q for d and −m_j for dmin (j the value's sub-block); Q6_K: s_j · (q − 32). Written
 * with primitives (the composite's decoder).
 */
export function scaleFactors(type: QuantType, quants: Tensor): Tensor {
  return scope(() => {
    const [out, words] = quants.shape;
    const blocks = words / FORMATS[type].words;
    if (type === 'q8_0') {
      const bytes = digits(quants, 256, 4).reshape([out, blocks, 1, QUANT_BLOCK]); // [out, blocks, 1, 32]
      return where(bytes.ge(128), bytes.sub(256), bytes).cast('f32');
    }
    if (type === 'q4_0') {
      const nibbles = digits(quants, 16, 8).reshape([out, blocks, 4, 4, 2]); // [out, blocks, word, byte, lo/hi]
      // Value index within the block: hi · 16 + word · 4 + byte.
      const ordered = nibbles.permute([0, 1, 4, 2, 3]).reshape([out, blocks, 1, QUANT_BLOCK]); // [out, blocks, 1, 32]
      return ordered.sub(8).cast('f32');
    }
    if (type === 'q6_k') return q6kFactors(quants.reshape([out, blocks, 52])).reshape([out, blocks, 1, 256]);
    const blockWords = quants.reshape([out, blocks, 36]); // [out, blocks, 36]
    const packed = slice(blockWords, [0, 0, 0], [out, blocks, 4]); // [out, blocks, 4]: scales then mins
    const sixBits = splitDigit(digits(packed, 256, 4), 64)[0].reshape([out, blocks, 2, 8, 1]); // [.., s/m, j, 1]
    const scale = slice(sixBits, [0, 0, 0], [out, blocks, 1]).cast('f32'); // [out, blocks, 1, 8, 1]
    const min = slice(sixBits, [0, 0, 1], [out, blocks, 1]).cast('f32'); // [out, blocks, 1, 8, 1]
    const codeWords = slice(blockWords, [0, 0, 4], [out, blocks, 32]); // [out, blocks, 32]
    const nibbles = digits(codeWords, 16, 8).reshape([out, blocks, 4, 8, 4, 2]); // [.., chunk, word, byte, lo/hi]
    // Sub-block 2 · chunk + hi, value word · 4 + byte within it.
    const q = nibbles.permute([0, 1, 2, 5, 3, 4]).reshape([out, blocks, 1, 8, QUANT_BLOCK]).cast('f32'); // [.., 1, 8, 32]
    const dFactor = q.mul(scale); // [out, blocks, 1, 8, 32]
    const minFactor = broadcastTo(min.neg(), dFactor.shape); // [out, blocks, 1, 8, 32]
    return concat([dFactor, minFactor], 2).reshape([out, blocks, 2, 256]); // [out, blocks, 2, 256]
  });
}

/** Q6_K's factors s_j · (q − 32), [out, blocks, 256], of its block words [out, blocks, 52] (see QuantizedWeight). */
function q6kFactors(blockWords: Tensor): Tensor {
  const [out, blocks] = blockWords.shape;
  const words = (from: number, count: number) => slice(blockWords, [0, 0, from], [out, blocks, count]);
  const scaleBytes = digits(words(0, 4), 256, 4).reshape([out, blocks, 16, 1]); // [out, blocks, j, 1]
  const scale = where(scaleBytes.ge(128), scaleBytes.sub(256), scaleBytes);
  // Low byte 64h + 32k1 + l, its low (k2 = 0) or high (k2 = 1) nibble: value 128h + 32(2k2 + k1) + l.
  const low = digits(words(4, 32), 16, 8).reshape([out, blocks, 2, 2, 32, 2]); // [out, blocks, h, k1, l, k2]
  const lowOrdered = low.permute([0, 1, 2, 5, 3, 4]).reshape([out, blocks, 2, 4, 32]); // [out, blocks, h, k, l]
  // High byte 32h + l, bit pair k: value 128h + 32k + l.
  const high = digits(words(36, 16), 4, 16).reshape([out, blocks, 2, 32, 4]); // [out, blocks, h, l, k]
  const highOrdered = high.permute([0, 1, 2, 4, 3]); // [out, blocks, h, k, l]
  const q = lowOrdered.add(highOrdered.mul(16)).sub(32).reshape([out, blocks, 16, 16]); // [out, blocks, j, 16]
  return q.mul(scale).cast('f32').reshape([out, blocks, 256]); // [out, blocks, 256]
}

/** The weight widened to f32 [out, in]: each value's sum of scale · factor (the reference the kernels are checked against). */
export function dequantize(type: QuantType, scales: Tensor, quants: Tensor): Tensor {
  return scope(() => {
    const { values, scales: perBlock } = FORMATS[type];
    const [out, width] = scales.shape;
    const blocks = width / perBlock;
    const factors = scaleFactors(type, quants); // [out, blocks, perBlock, values]
    const weighted = factors.mul(scales.reshape([out, blocks, perBlock, 1])); // [out, blocks, perBlock, values]
    const summed = perBlock === 1 ? weighted : weighted.sum(2); // [out, blocks, (1,) values]
    return summed.reshape([out, blocks * values]); // [out, in]
  });
}
