import { describe, expect, it } from 'vitest';
import { wasmRuntime } from '../src/wasm/runtime';
import { engineFeatures, WORD_DOTS_VARIABLE } from '../src/wasm/simd-probe';
import { describeKQuantMatmul } from './k-quant-cases';
import { describeQuantizedMatmul } from './quantized-cases';

// Before the runtime starts (on first use): this file's quantized products take the form of the byte dot product
// that the probe would not pick on this machine, so both forms are tested wherever the engine has the byte dot product.
const probed = engineFeatures().wordDots;
process.env[WORD_DOTS_VARIABLE] = probed ? '0' : '1';

describe(`${WORD_DOTS_VARIABLE}=${process.env[WORD_DOTS_VARIABLE]}`, () => {
  it("builds the quantized products on the other form of the byte dot product than this machine's", () => {
    expect(wasmRuntime()?.features.wordDots).toBe(engineFeatures().relaxedDot && !probed);
  });
});

describeKQuantMatmul("the byte dot product's form that the probe did not pick");
describeQuantizedMatmul("the byte dot product's form that the probe did not pick");
