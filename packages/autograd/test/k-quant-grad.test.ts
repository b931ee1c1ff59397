import { CpuBackend } from '@loom/backend-cpu';
import { QuantizedWeight, quantFormat, quantizedMatmul, type Tensor, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { AutodiffBackend, gradcheck } from '../src/index';

/** Seeded values in [-1, 1). */
function values(count: number, seed: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) | 0;
    return ((state >>> 8) / 2 ** 24) * 2 - 1;
  });
}

// Q4_K: d, dmin per super-block; Q6_K: d per super-block.
for (const type of ['q4_k', 'q6_k'] as const) {
  describe(`quantizedMatmul on ${type} weights`, () => {
    it('has the gradients of finite differences for x and for the super-block scales, in float64', async () => {
      const backend = new AutodiffBackend(new CpuBackend({ precision: 'f64' }));
      const [rows, out, inner] = [2, 3, 512];
      const { scales: perBlock, words: perBlockWords } = quantFormat(type);
      const [width, words] = [2 * perBlock, 2 * perBlockWords]; // two super-blocks per row
      const x = tensor(values(rows * inner, 1), [rows, inner], { backend });
      const scales = tensor(
        values(out * width, 2).map((v) => 0.01 * v),
        [out, width],
        { backend },
      );
      const codes = Int32Array.from(values(out * words, 3), (v) => Math.floor(v * 2 ** 31));
      const quants = tensor(codes, [out, words], { backend, dtype: 'i32' });
      const project = tensor(values(rows * out, 4), [rows, out], { backend });
      const fn = ([a, s, q]: Tensor[]) =>
        quantizedMatmul(a, new QuantizedWeight(type, s, q))
          .mul(project)
          .sum();
      const result = await gradcheck(fn, [x, scales, quants], { eps: 1e-6, atol: 1e-7, rtol: 1e-6 });
      expect(result.ok, result.message).toBe(true);
      expect(result.checked).toBe(rows * inner + out * width);
    });
  });
}
