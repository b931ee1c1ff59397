import {
  bf16ToF32,
  f16ToF32,
  type HalfType,
  HalfWeight,
  halfMatmul,
  tensor,
  unpackHalves,
} from '@loom/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { wasmForTests } from './wasm-for-tests';

const MODES = [
  { name: 'wasm, 1 thread', wasm: true, threads: 1 },
  { name: 'wasm, 2 threads', wasm: true, threads: 2 },
  { name: 'javascript', wasm: false, threads: 1 },
] as const;

/** The float32 value of each 16-bit pattern, by the table-driven converters (independent of the kernels). */
const WIDEN: Readonly<Record<HalfType, (bits: Uint16Array) => Float32Array>> = {
  f16: f16ToF32,
  bf16: bf16ToF32,
};

/** Every finite 16-bit pattern of `type`, padded with zeros to a multiple of `multiple`. */
function finitePatterns(type: HalfType, multiple: number): Uint16Array {
  const all = Array.from({ length: 65536 }, (_, bits) => bits);
  const finite = all.filter((bits) => Number.isFinite(WIDEN[type](Uint16Array.of(bits))[0]));
  const padded = new Uint16Array(Math.ceil(finite.length / multiple) * multiple);
  padded.set(finite);
  return padded;
}

describe('16-bit weights on the CPU backend', () => {
  const backends = new Map<string, CpuBackend>();
  beforeAll(async () => {
    wasmForTests();
    for (const mode of MODES) {
      const backend = new CpuBackend({ wasm: mode.wasm, threads: mode.threads });
      await backend.threadsReady();
      backends.set(mode.name, backend);
    }
  });
  afterAll(() => backends.clear());

  for (const type of ['f16', 'bf16'] as const) {
    it(`${type}: the composite's widening (unpackHalves) gives every finite pattern its exact value`, async () => {
      const backend = new CpuBackend({ wasm: false });
      const bits = finitePatterns(type, 2);
      const words = new Int32Array(bits.buffer);
      const packed = tensor(words, [1, words.length], { backend, dtype: 'i32' });
      const got = await unpackHalves(type, packed).data();
      expect(Array.from(got)).toEqual(Array.from(WIDEN[type](bits)));
    });

    for (const mode of MODES) {
      it(`${mode.name}, ${type}: one-hot rows of x read back every finite pattern exactly`, async () => {
        const backend = backends.get(mode.name);
        if (!backend) throw new Error(`no backend for ${mode.name}`);
        const inner = 8;
        const bits = finitePatterns(type, inner); // W [out, 8], row-major
        const out = bits.length / inner;
        const weight = new HalfWeight(
          type,
          tensor(new Int32Array(bits.buffer), [out, inner / 2], { backend, dtype: 'i32' }),
        );
        // x = the identity [8, 8]: out[i, j] = W[j, i].
        const eye = Float32Array.from({ length: inner * inner }, (_, k) => (k % (inner + 1) === 0 ? 1 : 0));
        const y = await halfMatmul(tensor(eye, [inner, inner], { backend }), weight).data();
        const values = WIDEN[type](bits);
        for (let i = 0; i < inner; i++) {
          for (let j = 0; j < out; j++) {
            if (y[i * out + j] !== values[j * inner + i]) {
              throw new Error(`[${i}, ${j}]: got ${y[i * out + j]}, expected ${values[j * inner + i]}`);
            }
          }
        }
      });

      it(`${mode.name}, ${type}: many rows against odd output counts and a row length off the 8-value step`, async () => {
        const backend = backends.get(mode.name);
        if (!backend) throw new Error(`no backend for ${mode.name}`);
        for (const [rows, out, inner] of [
          [5, 37, 96],
          [3, 7, 172],
        ] as const) {
          const bits = Uint16Array.from({ length: out * inner }, (_, k) => (k * 40503) & 0x3bff); // finite, |v| < 1
          const values = WIDEN[type](bits);
          const xs = Float32Array.from({ length: rows * inner }, (_, k) => Math.sin(k));
          const weight = new HalfWeight(
            type,
            tensor(new Int32Array(bits.buffer), [out, inner / 2], { backend, dtype: 'i32' }),
          );
          const y = await halfMatmul(tensor(xs, [rows, inner], { backend }), weight).data();
          for (let r = 0; r < rows; r++) {
            for (let j = 0; j < out; j++) {
              let want = 0;
              for (let i = 0; i < inner; i++) want += xs[r * inner + i] * values[j * inner + i];
              expect(Math.abs(y[r * out + j] - want)).toBeLessThan(1e-4 * Math.sqrt(inner));
            }
          }
        }
      });
    }
  }

  it('refuses a packed tensor that is not i32 [out, in / 2], and x of the wrong width', () => {
    const backend = new CpuBackend();
    expect(() => new HalfWeight('bf16', tensor(new Float32Array(4), [2, 2], { backend }))).toThrow(
      /expected packed i32 \[out, in \/ 2\]/,
    );
    const weight = new HalfWeight('bf16', tensor(new Int32Array(4), [2, 2], { backend, dtype: 'i32' }));
    expect(() => halfMatmul(tensor(new Float32Array(3), [1, 3], { backend }), weight)).toThrow(
      /must end in the weight's input size 4/,
    );
  });
});
