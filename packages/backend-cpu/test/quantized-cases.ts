import {
  QUANT_BLOCK,
  QuantizedWeight,
  type QuantType,
  quantizedMatmul,
  quantWordsPerBlock,
  tensor,
} from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import type { CpuPrecision } from '../src/precision';
import { wasmForTests } from './wasm-for-tests';

type Mode = {
  readonly name: string;
  readonly wasm: boolean;
  readonly threads: number;
  readonly precision: CpuPrecision;
};
const MODES: readonly Mode[] = [
  { name: 'wasm, 1 thread', wasm: true, threads: 1, precision: 'f32' },
  { name: 'wasm, 2 threads', wasm: true, threads: 2, precision: 'f32' },
  { name: 'javascript', wasm: false, threads: 1, precision: 'f32' },
  { name: 'float64', wasm: true, threads: 1, precision: 'f64' },
];

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
  [2, 6, 2048, 'random'],
  [3, 9, 192, 'extremes'],
];

/**
 * The quantizedMatmul cases on the CPU backend, each against a float64 decode of the bytes, in every mode (the
 * WebAssembly ones with the kernels `variant` names, which the caller has checked the runtime uses).
 */
export function describeQuantizedMatmul(variant: string): void {
  describe(`quantizedMatmul on the CPU backend reads Q8_0 and Q4_0 blocks directly (x quantized to int8 in WebAssembly, ${variant})`, () => {
    const backends = new Map<string, CpuBackend>();
    beforeAll(async () => {
      wasmForTests();
      for (const mode of MODES) {
        const backend = new CpuBackend({ wasm: mode.wasm, threads: mode.threads, precision: mode.precision });
        await backend.threadsReady();
        backends.set(mode.name, backend);
      }
    });
    afterAll(() => backends.clear());

    for (const mode of MODES) {
      for (const type of ['q8_0', 'q4_0'] as const) {
        for (const [rows, out, inner, fill] of CASES) {
          it(`${mode.name}, ${type}: [${rows}, ${inner}] x [${out}, ${inner}] (${fill}) matches a float64 decode of the bytes`, async () => {
            const backend = backends.get(mode.name);
            if (!backend) throw new Error(`no backend for ${mode.name}`);
            const weight32 = weightOf(type, out, inner, fill);
            const xs = xOf(rows * inner, fill);
            const blocks = inner / QUANT_BLOCK;
            const weight = new QuantizedWeight(
              type,
              tensor(weight32.scales, [out, blocks], { backend }),
              tensor(weight32.words, [out, blocks * quantWordsPerBlock(type)], { backend, dtype: 'i32' }),
            );
            const x = tensor(xs, [rows, inner], { backend });
            const before = backend.liveCount();
            const y = quantizedMatmul(x, weight);
            expect(y.shape).toEqual([rows, out]);
            expect(backend.liveCount()).toBe(before + 1);
            const got = await y.data();
            // The WebAssembly kernels quantize each 32-block of x to int8 (scale max|x| / 127), so each value of x
            // may move by half a step: that bound on top of a few units of f32 rounding of the sum of |terms|.
            // Their integer sums are exact, so nothing else is allowed.
            const int8 = mode.wasm && mode.precision === 'f32';
            for (let r = 0; r < rows; r++) {
              for (let j = 0; j < out; j++) {
                let want = 0;
                let scale = 0;
                let rounding = 0;
                for (let b = 0; b < blocks; b++) {
                  const block = xs.subarray(r * inner + b * QUANT_BLOCK, r * inner + (b + 1) * QUANT_BLOCK);
                  const halfStep = Math.max(...block.map(Math.abs)) / 254;
                  for (let i = b * QUANT_BLOCK; i < (b + 1) * QUANT_BLOCK; i++) {
                    const w = valueAt(type, weight32, inner, j, i);
                    want += xs[r * inner + i] * w;
                    scale += Math.abs(xs[r * inner + i] * w);
                    rounding += halfStep * Math.abs(w);
                  }
                }
                const tol = 1e-6 * scale + 1e-7 + (int8 ? rounding * (1 + 1e-5) : 0);
                expect(Math.abs(got[r * out + j] - want), `out[${r}, ${j}]`).toBeLessThanOrEqual(tol);
              }
            }
            for (const t of [x, y]) t.dispose();
            weight.dispose();
          });
        }
      }
    }
  });
}
