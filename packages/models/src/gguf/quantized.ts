import { type QuantType, quantFormat } from '@loom/tensor';
import { f16ToF32 } from '../half';
import { Q4_K_BYTES, Q6_K_BYTES, unpackScaleMins } from './k-quants';

/**
 * How a quantized GGUF file's linear-layer weights and token embedding are held after loading: `'f32'` widens every
 * weight to float32 (the only form training and LoRA use); `'quantized'` keeps the Q8_0, Q4_0, Q4_K and Q6_K blocks
 * of each linear layer's weight and of the embedding instead, which `transformerFromTensors` hands to the layer so
 * its products read the blocks directly (`quantizedMatmul`) and its lookups decode the rows they pick
 * (`weightRows`). Other types (floats) are widened either way.
 */
export type WeightsMode = 'f32' | 'quantized';

/** Options of loading a model file. */
export interface LoadOptions {
  /** See WeightsMode; default `'f32'`. */
  readonly weights?: WeightsMode;
}

/** The weights mode of `options` (default `'f32'`); throws, naming the option, on any other value. */
export function weightsModeOf(options: LoadOptions): WeightsMode {
  const mode: unknown = options.weights ?? 'f32';
  if (mode === 'f32' || mode === 'quantized') return mode;
  throw new Error(`load options: weights must be 'f32' or 'quantized', got ${JSON.stringify(mode)}`);
}

/** A linear layer's weight [out, in] kept block-quantized, laid out as QuantizedWeight expects. */
export interface NamedQuantizedTensor {
  readonly name: string;
  readonly type: QuantType;
  /** [out, in]. */
  readonly shape: readonly [number, number];
  /** The blocks' f32 scales, [out, blocks · scalesPerBlock] (one per block of 32; d, dmin per Q4_K super-block; d per Q6_K one). */
  readonly scales: Float32Array;
  /** The blocks' codes packed little-endian into words, [out, blocks · wordsPerBlock]. */
  readonly quants: Int32Array;
}

/** GGUF's block of each type: its bytes, and where its f16 scales lie (first, but last in Q6_K). */
const GGUF_BLOCKS: Readonly<Record<QuantType, { readonly bytes: number; readonly scalesAt: number }>> = {
  q8_0: { bytes: 34, scalesAt: 0 },
  q4_0: { bytes: 18, scalesAt: 0 },
  q4_k: { bytes: Q4_K_BYTES, scalesAt: 0 },
  q6_k: { bytes: Q6_K_BYTES, scalesAt: Q6_K_BYTES - 2 },
};

/** Loom names of the weights that are products (not embeddings or norms). */
export function isLinearWeight(name: string): boolean {
  return (
    name === 'output.weight' || /^layers\.\d+\.(attention\.w[qkvo]|feed_forward\.w[123])\.weight$/.test(name)
  );
}

/**
 * Loom names of the weights a compact form (quantized blocks, 16-bit halves) may hold in place of float32 values: the
 * products' weights and the token embedding, whose lookups decode the rows they read (and which a tied output
 * projection reads as a product).
 */
export function isCompactWeight(name: string): boolean {
  return isLinearWeight(name) || name === 'tok_embeddings.weight';
}

/**
 * Splits GGUF Q8_0 / Q4_0 / Q4_K / Q6_K blocks of a weight [out, in] into f32 scales and word-packed codes laid out
 * as QuantizedWeight expects (Q8_0 / Q4_0: the codes' bytes unchanged; Q4_K: d and dmin widened, the 12 bytes of
 * packed 6-bit scales and mins unpacked to 16, the nibbles unchanged; Q6_K: d widened, the 16 int8 scales moved
 * ahead of the unchanged low nibbles and high bit pairs). The row length and byte count are checked against the
 * shape first.
 */
export function repackGgufBlocks(
  name: string,
  type: QuantType,
  shape: readonly [number, number],
  bytes: Uint8Array,
): NamedQuantizedTensor {
  const [out, inner] = shape;
  const format = quantFormat(type);
  const { bytes: blockBytes, scalesAt } = GGUF_BLOCKS[type];
  if (inner % format.values !== 0) {
    throw new Error(
      `${name}: a ${type} row must be a multiple of ${format.values} values, got [${out}, ${inner}]; ` +
        (format.values === 256 ? 'quantize it to q4_0 or q8_0 instead' : 'keep it in f32'),
    );
  }
  const blocks = (out * inner) / format.values;
  if (bytes.length !== blocks * blockBytes) {
    throw new Error(
      `${name}: ${type} [${out}, ${inner}] needs ${blocks * blockBytes} bytes (${blocks} blocks of ${blockBytes}), got ${bytes.length}`,
    );
  }
  const bits = new Uint16Array(blocks * format.scales);
  const quants = new Int32Array(blocks * format.words);
  const codes = new Uint8Array(quants.buffer);
  const codeBytes = 4 * format.words;
  for (let b = 0; b < blocks; b++) {
    const at = b * blockBytes;
    for (let k = 0; k < format.scales; k++)
      bits[b * format.scales + k] = bytes[at + scalesAt + 2 * k] | (bytes[at + scalesAt + 2 * k + 1] << 8);
    const from = at + 2 * format.scales;
    if (type === 'q6_k') {
      const subScales = at + 192; // after 128 bytes of low nibbles and 64 of high bit pairs
      codes.set(bytes.subarray(subScales, subScales + 16), b * codeBytes);
      codes.set(bytes.subarray(at, subScales), b * codeBytes + 16);
    } else if (type === 'q4_k') {
      unpackScaleMins(bytes, from, codes, b * codeBytes);
      codes.set(bytes.subarray(from + 12, at + blockBytes), b * codeBytes + 16);
    } else {
      codes.set(bytes.subarray(from, at + blockBytes), b * codeBytes);
    }
  }
  return { name, type, shape: [out, inner], scales: f16ToF32(bits), quants };
}
