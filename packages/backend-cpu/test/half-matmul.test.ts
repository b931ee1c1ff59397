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
      // One row of x at a time takes the dot kernels; 16 rows at once, W widened into f32 panels first.
      for (const rows of [1, 16]) {
        it(`${mode.name}, ${type}: one-hot rows of x, ${rows} a product, read back every finite pattern exactly`, async () => {
          const backend = backends.get(mode.name);
          if (!backend) throw new Error(`no backend for ${mode.name}`);
          const inner = 16;
          const bits = finitePatterns(type, inner); // W [out, 16], row-major
          const out = bits.length / inner;
          const weight = new HalfWeight(
            type,
            tensor(new Int32Array(bits.buffer), [out, inner / 2], { backend, dtype: 'i32' }),
          );
          const values = WIDEN[type](bits);
          for (let first = 0; first < inner; first += rows) {
            // x = rows first .. first + rows - 1 of the identity [16, 16]: out[r, j] = W[j, first + r].
            const eye = Float32Array.from({ length: rows * inner }, (_, k) =>
              k % inner === first + Math.floor(k / inner) ? 1 : 0,
            );
            const y = await halfMatmul(tensor(eye, [rows, inner], { backend }), weight).data();
            for (let r = 0; r < rows; r++) {
              for (let j = 0; j < out; j++) {
                const want = values[j * inner + first + r];
                if (y[r * out + j] !== want)
                  throw new Error(`[${first + r}, ${j}]: got ${y[r * out + j]}, expected ${want}`);
              }
            }
          }
        });
      }

      it(`${mode.name}, ${type}: many rows against odd output counts and a row length off the 8-value step`, async () => {
        const backend = backends.get(mode.name);
        if (!backend) throw new Error(`no backend for ${mode.name}`);
        for (const [rows, out, inner] of [
          [20, 37, 96],
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

  for (const type of ['f16', 'bf16'] as const) {
    for (const mode of MODES) {
      it(`${mode.name}, ${type}: rows of x with huge, tiny and infinite values, one a product and all at once`, async () => {
        const backend = backends.get(mode.name);
        if (!backend) throw new Error(`no backend for ${mode.name}`);
        const [out, inner] = [13, 96];
        const bits = Uint16Array.from({ length: out * inner }, (_, k) => (k * 40503) & 0xbbff); // finite, |v| < 1, both signs
        const values = WIDEN[type](bits);
        // Magnitudes past 2^16 (binary16's dot kernel scales those rows less), far past it, tiny, and one infinity.
        const scales = [3e5, 1e30, 1e-30, 1];
        const xs = Float32Array.from(
          { length: scales.length * inner },
          (_, k) => scales[Math.floor(k / inner)] * Math.sin(k),
        );
        xs[3 * inner + 5] = Number.POSITIVE_INFINITY;
        const weight = new HalfWeight(
          type,
          tensor(new Int32Array(bits.buffer), [out, inner / 2], { backend, dtype: 'i32' }),
        );
        const check = (y: ArrayLike<number>, r: number, row: number) => {
          for (let j = 0; j < out; j++) {
            let want = 0;
            let magnitude = 0;
            for (let i = 0; i < inner; i++) {
              want += xs[r * inner + i] * values[j * inner + i];
              magnitude += Math.abs(xs[r * inner + i] * values[j * inner + i]);
            }
            const got = y[row * out + j];
            if (!Number.isFinite(want)) expect(got).toBe(want);
            else expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-6 * magnitude);
          }
        };
        const all = await halfMatmul(tensor(xs, [scales.length, inner], { backend }), weight).data();
        for (let r = 0; r < scales.length; r++) {
          check(all, r, r);
          const one = await halfMatmul(
            tensor(xs.subarray(r * inner, (r + 1) * inner), [1, inner], { backend }),
            weight,
          ).data();
          check(one, r, 0);
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
