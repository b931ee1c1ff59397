import { QuantizedWeight, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { describeKQuantMatmul } from './k-quant-cases';

describeKQuantMatmul("the engine's kernels: relaxed SIMD byte dot products for Q6_K where it has them");

describe('K-quant weights whose sizes do not match their super-blocks', () => {
  const backend = new CpuBackend({ wasm: false });
  it('rejects q4_k weights, naming the sizes', () => {
    const scales = tensor(new Float32Array(6), [1, 6], { backend });
    expect(
      () =>
        new QuantizedWeight('q4_k', scales, tensor(new Int32Array(100), [1, 100], { backend, dtype: 'i32' })),
    ).toThrow(/q4_k quants must hold 36 words per block: 3 blocks need \[1, 108\], got \[1, 100\]/);
    const odd = tensor(new Float32Array(3), [1, 3], { backend });
    expect(
      () => new QuantizedWeight('q4_k', odd, tensor(new Int32Array(36), [1, 36], { backend, dtype: 'i32' })),
    ).toThrow(/d and dmin per super-block/);
  });

  it('rejects q6_k weights, naming the sizes', () => {
    const scales = tensor(new Float32Array(2), [1, 2], { backend });
    expect(
      () =>
        new QuantizedWeight('q6_k', scales, tensor(new Int32Array(100), [1, 100], { backend, dtype: 'i32' })),
    ).toThrow(/q6_k quants must hold 52 words per block: 2 blocks need \[1, 104\], got \[1, 100\]/);
  });
});
