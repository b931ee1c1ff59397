import { QuantizedWeight, quantizedMatmul, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backend';
import { wasmRuntime } from '../src/wasm/runtime';
import { RELAXED_SIMD_VARIABLE } from '../src/wasm/simd-probe';
import { describeQuantizedMatmul } from './quantized-cases';

// Every supported engine has the relaxed byte dot product in one of its forms (Node 20's i32 form gives wrong sums,
// its i16 form exact ones) unless relaxed SIMD is turned off.
const byteDot = process.env[RELAXED_SIMD_VARIABLE] !== '0';

describe('the quantized products on this engine', () => {
  it(`run the ${byteDot ? 'relaxed SIMD byte dot products' : 'plain SIMD i16 dot products'}`, () => {
    const form = wasmRuntime()?.features.byteDot;
    if (byteDot) expect(['i32', 'i16']).toContain(form);
    else expect(form).toBe('none');
  });
});

describeQuantizedMatmul(byteDot ? 'relaxed SIMD byte dot products' : 'plain SIMD i16 dot products');

describe('quantizedMatmul input checks', () => {
  it('rejects x whose last axis is not the weight input size, naming both', () => {
    const backend = new CpuBackend();
    const weight = new QuantizedWeight(
      'q8_0',
      tensor(new Float32Array(2), [2, 1], { backend }),
      tensor(new Int32Array(16), [2, 8], { backend, dtype: 'i32' }),
    );
    const x = tensor(new Float32Array(31), [1, 31], { backend });
    expect(() => quantizedMatmul(x, weight)).toThrow(/x \[1, 31\] must end in the weight's input size 32/);
    expect(() => new QuantizedWeight('q4_0', weight.scales, weight.quants)).toThrow(
      /q4_0 quants must hold 4 words per block/,
    );
  });
});
