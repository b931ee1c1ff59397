import { describe, expect, it } from 'vitest';
import { BASELINE_FEATURES } from '../src/wasm/expr';
import { wasmRuntime } from '../src/wasm/runtime';
import { RELAXED_SIMD_VARIABLE } from '../src/wasm/simd-probe';
import { describeKQuantMatmul } from './k-quant-cases';

// Before the runtime starts (on first use): this file's kernels are built without relaxed SIMD, as on an engine without it, so
// the plain SIMD K-quant products are tested on engines that have relaxed SIMD too.
process.env[RELAXED_SIMD_VARIABLE] = '0';

describe(`${RELAXED_SIMD_VARIABLE}=0`, () => {
  it('builds the kernels without relaxed SIMD, so the plain SIMD i16 dot products run', () => {
    expect(wasmRuntime()?.features).toEqual(BASELINE_FEATURES);
  });
});

describeKQuantMatmul('plain SIMD i16 dot products, relaxed SIMD turned off');
