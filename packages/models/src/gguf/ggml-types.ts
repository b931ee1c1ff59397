import { bf16ToF32, f16ToF32 } from '../half';
import { dequantizeQ4K, dequantizeQ6K, K_BLOCK, Q4_K_BYTES, Q6_K_BYTES } from './k-quants';

/** The ggml tensor types Loom reads, by their GGUF type id; weights are widened to float32 on load. */
export type GgmlTypeName = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K';

export interface GgmlType {
  readonly name: GgmlTypeName;
  /** Elements per block (1 for plain floats). */
  readonly blockSize: number;
  /** Bytes per block. */
  readonly blockBytes: number;
  /** Float32 values of `count` elements stored in `bytes`. */
  readonly dequantize: (bytes: Uint8Array, count: number) => Float32Array;
}

function halves(bytes: Uint8Array): Uint16Array {
  return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
}

/** The float16 scale at the start of each block, for every block. */
function blockScales(bytes: Uint8Array, blocks: number, blockBytes: number): Float32Array {
  const bits = new Uint16Array(blocks);
  for (let b = 0; b < blocks; b++) bits[b] = bytes[b * blockBytes] | (bytes[b * blockBytes + 1] << 8);
  return f16ToF32(bits);
}

/** Q8_0: blocks of 32 int8 values and one float16 scale d; value = d·q. */
function dequantizeQ8_0(bytes: Uint8Array, count: number): Float32Array {
  const blocks = count / 32;
  const scales = blockScales(bytes, blocks, 34);
  const out = new Float32Array(count);
  const signed = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    const d = scales[b];
    const base = b * 34 + 2;
    for (let i = 0; i < 32; i++) out[b * 32 + i] = d * signed[base + i];
  }
  return out;
}

/** Q4_0: blocks of 32 4-bit values and one float16 scale d; byte i holds elements i (low half) and i+16 (high half); value = d·(q−8). */
function dequantizeQ4_0(bytes: Uint8Array, count: number): Float32Array {
  const blocks = count / 32;
  const scales = blockScales(bytes, blocks, 18);
  const out = new Float32Array(count);
  for (let b = 0; b < blocks; b++) {
    const d = scales[b];
    const base = b * 18 + 2;
    for (let i = 0; i < 16; i++) {
      const byte = bytes[base + i];
      out[b * 32 + i] = d * ((byte & 0x0f) - 8);
      out[b * 32 + i + 16] = d * ((byte >> 4) - 8);
    }
  }
  return out;
}

export const GGML_TYPES: ReadonlyMap<number, GgmlType> = new Map<number, GgmlType>([
  [
    0,
    {
      name: 'F32',
      blockSize: 1,
      blockBytes: 4,
      dequantize: (bytes) => new Float32Array(bytes.slice().buffer),
    },
  ],
  [1, { name: 'F16', blockSize: 1, blockBytes: 2, dequantize: (bytes) => f16ToF32(halves(bytes)) }],
  [30, { name: 'BF16', blockSize: 1, blockBytes: 2, dequantize: (bytes) => bf16ToF32(halves(bytes)) }],
  [8, { name: 'Q8_0', blockSize: 32, blockBytes: 34, dequantize: dequantizeQ8_0 }],
  [2, { name: 'Q4_0', blockSize: 32, blockBytes: 18, dequantize: dequantizeQ4_0 }],
  [12, { name: 'Q4_K', blockSize: K_BLOCK, blockBytes: Q4_K_BYTES, dequantize: dequantizeQ4K }],
  [14, { name: 'Q6_K', blockSize: K_BLOCK, blockBytes: Q6_K_BYTES, dequantize: dequantizeQ6K }],
]);

/** Names of ggml types Loom knows of but does not read, for a precise refusal. */
export const OTHER_GGML_TYPES: ReadonlyMap<number, string> = new Map([
  [3, 'Q4_1'],
  [6, 'Q5_0'],
  [7, 'Q5_1'],
  [9, 'Q8_1'],
  [10, 'Q2_K'],
  [11, 'Q3_K'],
  [13, 'Q5_K'],
  [15, 'Q8_K'],
]);
