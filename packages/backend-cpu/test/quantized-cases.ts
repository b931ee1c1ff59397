import { QUANT_BLOCK, QuantizedWeight, type QuantType, quantWordsPerBlock, tensor } from '@loom/tensor';
import { describe, it } from 'vitest';
import { backendsForModes, expectQuantizedProduct, MODES } from './quantized-product-check';

/** How a case's weight bytes and x are drawn. */
type Fill = 'random' | 'extremes';

let seed = 777;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
  return ((seed >>> 8) / 2 ** 24) * 2 - 1;
}

/**
 * Scales and block bytes of a weight [out, in]: random bytes, or (`extremes`) every byte 0x80 — Q8_0 code -128,
 * the one code whose negation does not fit a byte, and Q4_0 nibbles 0 and 8.
 */
function weightOf(
  type: QuantType,
  out: number,
  inner: number,
  fill: Fill,
): { scales: Float32Array; words: Int32Array } {
  const blocks = inner / QUANT_BLOCK;
  const scales = Float32Array.from({ length: out * blocks }, () => 0.01 * random());
  const words = new Int32Array(out * blocks * quantWordsPerBlock(type));
  const bytes = new Uint8Array(words.buffer);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = fill === 'extremes' ? 0x80 : Math.floor(256 * (0.5 + 0.5 * random())) & 255;
  }
  return { scales, words };
}

/** x: random in (-1, 1), or (`extremes`) blocks of negative values, of zeros, and of one large value among small ones. */
function xOf(length: number, fill: Fill): Float32Array {
  if (fill === 'random') return Float32Array.from({ length }, () => random());
  return Float32Array.from({ length }, (_, i) => {
    const kind = Math.floor(i / QUANT_BLOCK) % 3;
    if (kind === 0) return -Math.abs(random()) - 0.01;
    if (kind === 1) return 0;
    return i % QUANT_BLOCK === 5 ? 1000 : 0.001 * random();
  });
}

/** The value of element i of row j, decoded from the bytes as GGUF lays them out (independent of the kernels). */
function valueAt(
  type: QuantType,
  w: { scales: Float32Array; words: Int32Array },
  inner: number,
  j: number,
  i: number,
) {
  const blocks = inner / QUANT_BLOCK;
  const b = Math.floor(i / QUANT_BLOCK);
  const within = i % QUANT_BLOCK;
  const bytes = new Uint8Array(w.words.buffer);
  const blockStart = (j * blocks + b) * quantWordsPerBlock(type) * 4;
  let code: number;
  if (type === 'q8_0') {
    const u = bytes[blockStart + within];
    code = u >= 128 ? u - 256 : u;
  } else {
    const u = bytes[blockStart + (within % 16)];
    code = (within < 16 ? u % 16 : Math.floor(u / 16)) - 8;
  }
  return w.scales[j * blocks + b] * code;
}

/**
 * [rows, out, in], how filled: single outputs and rows, output counts that leave a tail after the tiles of 4,
 * many rows, long rows.
 */
const CASES: readonly [rows: number, out: number, inner: number, fill: Fill][] = [
  [1, 1, 32, 'random'],
  [1, 37, 256, 'random'],
  [6, 37, 96, 'random'],
  [9, 300, 64, 'random'],
  [1, 512, 288, 'random'],
  [33, 7, 128, 'random'],
  [40, 100, 64, 'random'],
  [16, 5, 96, 'extremes'],
  [2, 6, 2048, 'random'],
  [3, 9, 192, 'extremes'],
];

/**
 * The quantizedMatmul cases on the CPU backend, each against a float64 decode of the bytes, in every mode (the
 * WebAssembly ones with the kernels `variant` names, which the caller has checked the runtime uses).
 */
export function describeQuantizedMatmul(variant: string): void {
  describe(`quantizedMatmul on the CPU backend reads Q8_0 and Q4_0 blocks directly (x quantized to int8 in WebAssembly, ${variant})`, () => {
    const backendOf = backendsForModes();

    for (const mode of MODES) {
      for (const type of ['q8_0', 'q4_0'] as const) {
        for (const [rows, out, inner, fill] of CASES) {
          it(`${mode.name}, ${type}: [${rows}, ${inner}] x [${out}, ${inner}] (${fill}) matches a float64 decode of the bytes`, async () => {
            const backend = backendOf(mode);
            const weight32 = weightOf(type, out, inner, fill);
            const blocks = inner / QUANT_BLOCK;
            const weight = new QuantizedWeight(
              type,
              tensor(weight32.scales, [out, blocks], { backend }),
              tensor(weight32.words, [out, blocks * quantWordsPerBlock(type)], { backend, dtype: 'i32' }),
            );
            const decoded = (j: number, i: number) => valueAt(type, weight32, inner, j, i);
            const xs = xOf(rows * inner, fill);
            await expectQuantizedProduct({
              mode,
              backend,
              xs,
              rows,
              weight,
              valueAt: decoded,
              xBlock: QUANT_BLOCK,
            });
            weight.dispose();
          });
        }
      }
    }
  });
}
