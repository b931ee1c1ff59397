import { QUANT_BLOCK, type QuantType, quantWordsPerBlock } from '@loom/tensor';
import { f16ToF32 } from '../half';

/**
 * How a quantized GGUF file's linear-layer weights are held after loading: `'f32'` widens every
 * weight to float32 (the only form training and LoRA use); `'quantized'` also keeps the Q8_0 and
 * Q4_0 blocks of each linear layer's weight, which `transformerFromTensors` hands to the layer so
 * its products read the blocks directly (`quantizedMatmul`). Other types (Q4_K, Q6_K, floats) are
 * widened either way.
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
  /** One scale per block, [out, in / 32]. */
  readonly scales: Float32Array;
  /** The blocks' codes packed little-endian into words, [out, in / 32 · wordsPerBlock]. */
  readonly quants: Int32Array;
}

/** GGUF bytes per block (an f16 scale, then the codes). */
const GGUF_BLOCK_BYTES: Readonly<Record<QuantType, number>> = { q8_0: 34, q4_0: 18 };

/** Loom names of the weights that are products (not embeddings or norms), the ones kept quantized. */
export function isLinearWeight(name: string): boolean {
  return (
    name === 'output.weight' || /^layers\.\d+\.(attention\.w[qkvo]|feed_forward\.w[123])\.weight$/.test(name)
  );
}

/**
 * Splits GGUF Q8_0 / Q4_0 blocks of a weight [out, in] into f32 scales and word-packed codes (the
 * codes' bytes are copied unchanged). The byte count is checked against the shape first.
 */
export function repackGgufBlocks(
  name: string,
  type: QuantType,
  shape: readonly [number, number],
  bytes: Uint8Array,
): NamedQuantizedTensor {
  const [out, inner] = shape;
  const blockBytes = GGUF_BLOCK_BYTES[type];
  if (inner % QUANT_BLOCK !== 0) {
    throw new Error(
      `${name}: a ${type} row must be a multiple of ${QUANT_BLOCK} values, got [${out}, ${inner}]`,
    );
  }
  const blocks = (out * inner) / QUANT_BLOCK;
  if (bytes.length !== blocks * blockBytes) {
    throw new Error(
      `${name}: ${type} [${out}, ${inner}] needs ${blocks * blockBytes} bytes (${blocks} blocks of ${blockBytes}), got ${bytes.length}`,
    );
  }
  const codeBytes = blockBytes - 2;
  const bits = new Uint16Array(blocks);
  const quants = new Int32Array(blocks * quantWordsPerBlock(type));
  const codes = new Uint8Array(quants.buffer);
  for (let b = 0; b < blocks; b++) {
    const at = b * blockBytes;
    bits[b] = bytes[at] | (bytes[at + 1] << 8);
    codes.set(bytes.subarray(at + 2, at + blockBytes), b * codeBytes);
  }
  return { name, type, shape: [out, inner], scales: f16ToF32(bits), quants };
}
