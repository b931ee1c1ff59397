import { describe, expect, it } from 'vitest';
import { wasmRuntime } from '../src/wasm/runtime';
import { BYTE_DOT_VARIABLE, engineFeatures, RELAXED_SIMD_VARIABLE } from '../src/wasm/simd-probe';
import { describeKQuantMatmul } from './k-quant-cases';
import { describeQuantizedMatmul } from './quantized-cases';

// Before the runtime starts (on first use): this file's quantized products take the form of the byte dot product
// that the probe would not pick on this machine, so both forms are tested wherever the engine has them exact.
const other = engineFeatures().byteDot === 'i16' ? 'i32' : 'i16';
process.env[BYTE_DOT_VARIABLE] = other;
// Node 20's i32 form gives wrong sums: forced there, the products take plain SIMD's instead, as they do without relaxed
// SIMD.
const inexact = other === 'i32' && Number(process.versions.node.split('.')[0]) < 22;
const expected = inexact || process.env[RELAXED_SIMD_VARIABLE] === '0' ? 'none' : other;

describe(`${BYTE_DOT_VARIABLE}=${other}`, () => {
  it(`builds the quantized products on the ${expected} form`, () => {
    expect(wasmRuntime()?.features.byteDot).toBe(expected);
  });
});

describeKQuantMatmul(`the byte dot product's ${expected} form, which the probe did not pick`);
describeQuantizedMatmul(`the byte dot product's ${expected} form, which the probe did not pick`);
