import { CpuBackend } from '@loom/backend-cpu';
import { QuantizedWeight, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { Linear } from '../src/index';

const backend = new CpuBackend({ precision: 'f64' });
beforeAll(() => setBackend(backend));

/** A Q8_0 weight [out, 32] whose row j holds codes j + 1 and i - 16 alternately, scale 0.5 (words little-endian). */
function q8Weight(out: number): { weight: QuantizedWeight; values: number[][] } {
  const bytes = new Uint8Array(out * 32);
  const values: number[][] = [];
  for (let j = 0; j < out; j++) {
    const row: number[] = [];
    for (let i = 0; i < 32; i++) {
      const code = i % 2 === 0 ? j + 1 : i - 16;
      bytes[j * 32 + i] = code & 255;
      row.push(0.5 * code);
    }
    values.push(row);
  }
  const weight = new QuantizedWeight(
    'q8_0',
    tensor(new Float32Array(out).fill(0.5), [out, 1]),
    tensor(new Int32Array(bytes.buffer), [out, 8], { dtype: 'i32' }),
  );
  return { weight, values };
}

describe('Linear with a quantized weight', () => {
  it('computes x Wᵀ + b from the blocks, not from its f32 weight, and frees them on dispose', async () => {
    const linear = new Linear(32, 3, { bias: true, std: 0.02, seed: 1 });
    const { weight, values } = q8Weight(3);
    linear.useQuantized(weight);
    expect(linear.quantized).toBe(weight);
    const xs = Array.from({ length: 64 }, (_, i) => Math.cos(i));
    const x = tensor(xs, [2, 32]);
    const y = linear.forward(x);
    const got = await y.data();
    const bias = await (linear.bias ?? x).data();
    for (let r = 0; r < 2; r++) {
      for (let j = 0; j < 3; j++) {
        const want = values[j].reduce((sum, w, i) => sum + w * xs[r * 32 + i], bias[j]);
        expect(got[r * 3 + j]).toBeCloseTo(want, 9);
      }
    }
    const before = backend.liveCount();
    linear.dispose();
    // The weight, the bias and both tensors of the quantized weight.
    expect(before - backend.liveCount()).toBe(4);
    for (const t of [x, y]) t.dispose();
  });

  it('refuses a quantized weight of another shape, naming both', () => {
    const linear = new Linear(64, 3, { bias: false, std: 0.02, seed: 1 });
    const { weight } = q8Weight(3);
    expect(() => linear.useQuantized(weight)).toThrow(
      /Linear.useQuantized: weight \[3, 32\] does not match the layer's \[3, 64\]/,
    );
    weight.dispose();
    linear.dispose();
  });
});
