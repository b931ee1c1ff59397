import { dequantize, QuantizedWeight, quantFormat, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { backendsForModes, expectQuantizedProduct, MODES } from './quantized-product-check';

let seed = 4242;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
  return ((seed >>> 8) / 2 ** 24) * 2 - 1;
}

type KQuant = 'q4_k' | 'q6_k';

/** A random weight [out, in] of `type`: its f32 scales and random bytes of codes (every bit of every field). */
interface Weight {
  readonly type: KQuant;
  readonly inner: number;
  readonly scales: Float32Array;
  readonly words: Int32Array;
}

function randomWeight(type: KQuant, out: number, inner: number): Weight {
  const { scales: perBlock, words } = quantFormat(type);
  const blocks = inner / 256;
  const scales = Float32Array.from({ length: out * blocks * perBlock }, () => 0.002 * random());
  const codes = new Int32Array(out * blocks * words);
  const bytes = new Uint8Array(codes.buffer);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(256 * (0.5 + 0.5 * random())) & 255;
  return { type, inner, scales, words: codes };
}

/** Where element i of row j lies: its super-block's scales and bytes, and its index within the super-block. */
function located(w: Weight, j: number, i: number) {
  const blocks = w.inner / 256;
  const block = j * blocks + Math.floor(i / 256);
  const { scales: perBlock, words } = quantFormat(w.type);
  const bytes = new Uint8Array(w.words.buffer, 4 * words * block, 4 * words);
  return { bytes, scales: w.scales.subarray(perBlock * block, perBlock * (block + 1)), v: i % 256 };
}

/**
 * Element i of row j decoded from the bytes by the format's definition (independent of the kernels), with the size
 * of the terms its f32 decode rounds. Q4_K: sub-block s = v / 32, value d · (scale byte s & 63) · nibble − dmin ·
 * (min byte s & 63), the nibble in byte 32c + l of the nibbles, low half for even s (c = s >> 1, l = v mod 32). Q6_K:
 * v = 128h + 32k + l, value d · (int8 scale byte v / 16) · (q − 32), q = the low (k < 2) or high nibble of low byte
 * 64h + 32 (k mod 2) + l plus 16 · bits 2k, 2k + 1 of high byte 32h + l.
 */
function valueAt(w: Weight, j: number, i: number): { value: number; terms: number } {
  const { bytes, scales, v } = located(w, j, i);
  if (w.type === 'q4_k') {
    const [s, l] = [Math.floor(v / 32), v % 32];
    const byte = bytes[16 + 32 * Math.floor(s / 2) + l];
    const nibble = s % 2 === 0 ? byte % 16 : Math.floor(byte / 16);
    const [d, dmin] = [scales[0], scales[1]];
    const [scale, min] = [bytes[s] % 64, bytes[8 + s] % 64];
    return { value: d * scale * nibble - dmin * min, terms: Math.abs(d * 63 * 15) + Math.abs(dmin * min) };
  }
  const [h, k, l] = [Math.floor(v / 128), Math.floor((v % 128) / 32), v % 32];
  const low = bytes[16 + 64 * h + 32 * (k % 2) + l];
  const nibble = k < 2 ? low % 16 : Math.floor(low / 16);
  const pair = Math.floor(bytes[144 + 32 * h + l] / 4 ** k) % 4;
  const raw = bytes[Math.floor(v / 16)];
  const scale = raw >= 128 ? raw - 256 : raw;
  return { value: scales[0] * scale * (nibble + 16 * pair - 32), terms: Math.abs(scales[0] * 128 * 32) };
}

function weightOf(w: Weight, out: number, backend: CpuBackend): QuantizedWeight {
  const { scales: perBlock, words } = quantFormat(w.type);
  const blocks = w.inner / 256;
  return new QuantizedWeight(
    w.type,
    tensor(w.scales, [out, perBlock * blocks], { backend }),
    tensor(w.words, [out, words * blocks], { backend, dtype: 'i32' }),
  );
}

const SHAPES: readonly [rows: number, out: number, inner: number][] = [
  [1, 1, 256],
  [1, 37, 512],
  [6, 5, 768],
  [9, 30, 256],
  [1, 130, 1024],
  [20, 37, 512],
  [17, 130, 256],
];

/**
 * The K-quant quantizedMatmul cases on the CPU backend, each against a float64 decode of the bytes, in every mode (the
 * WebAssembly ones with the kernels `variant` names, which the caller has checked the runtime uses).
 */
export function describeKQuantMatmul(variant: string): void {
  for (const type of ['q4_k', 'q6_k'] as const) {
    describeType(type, variant);
  }
}

function describeType(type: KQuant, variant: string): void {
  describe(`quantizedMatmul on the CPU backend reads ${type} blocks directly (x quantized to int8 per 256 in WebAssembly, ${variant})`, () => {
    const backendOf = backendsForModes();

    it('dequantize (the composite) decodes every value as the format defines it', async () => {
      const backend = new CpuBackend({ wasm: false });
      const [out, inner] = [3, 512];
      const w = randomWeight(type, out, inner);
      const weight = weightOf(w, out, backend);
      const values = await dequantize(type, weight.scales, weight.quants).data();
      for (let j = 0; j < out; j++) {
        for (let i = 0; i < inner; i++) {
          const { value, terms } = valueAt(w, j, i);
          expect(Math.abs(values[j * inner + i] - value), `w[${j}, ${i}]`).toBeLessThanOrEqual(1e-6 * terms);
        }
      }
    });

    for (const mode of MODES) {
      for (const [rows, out, inner] of SHAPES) {
        it(`${mode.name}: [${rows}, ${inner}] x [${out}, ${inner}] matches a float64 decode of the bytes`, async () => {
          const backend = backendOf(mode);
          const w = randomWeight(type, out, inner);
          // Each super-block of x at its own scale (1, 4 or 16), so a kernel reading the wrong one's step misses.
          const xs = Float32Array.from({ length: rows * inner }, (_, i) => random() * 4 ** ((i >> 8) % 3));
          const weight = weightOf(w, out, backend);
          const decoded = (j: number, i: number) => valueAt(w, j, i).value;
          await expectQuantizedProduct({ mode, backend, xs, rows, weight, valueAt: decoded, xBlock: 256 });
          weight.dispose();
        });
      }
    }
  });
}
