import { describe, expect, it } from 'vitest';
import { quantizeActivations, quantizeSuperBlocks } from '../src/fused/quantize-activations';
import { CpuStorage } from '../src/storage';
import type { ActivationForm } from '../src/wasm/quant-dot-kernel';
import { X_BYTE_SUMS, X_ORDER, X_SUMS, X_SUPER_BLOCK_BYTES } from '../src/wasm/super-block-dot';
import { wasmForTests } from './wasm-for-tests';

let seed = 5;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) | 0;
  return ((seed >>> 8) / 2 ** 24) * 2 - 1;
}

/** Round to nearest, ties to even. */
function roundEven(v: number): number {
  const r = Math.round(v);
  // Math.round takes ties up, and gives -0 for small negative values: integers here.
  return (Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r) + 0;
}

/** The codes and scale of one block of values (32, or a super-block of 256), in f32 as the rule says (no code shared with the kernel). */
function referenceBlock(values: Float32Array): { codes: number[]; scale: number } {
  const amax = Math.max(...values.map(Math.abs));
  const scale = Math.fround(amax / 127);
  const inverse = scale === 0 ? 0 : Math.fround(1 / scale);
  return { codes: Array.from(values, (x) => roundEven(Math.fround(x * inverse))), scale };
}

/** Where each form puts code i of a block, as byte offsets and widths (see ActivationForm). */
function readCodes(form: ActivationForm, memory: ArrayBuffer, at: number): number[] {
  const view = new DataView(memory, at);
  return Array.from({ length: 32 }, (_, i) => {
    if (form === 'i16') return view.getInt16(2 * i, true);
    if (form === 'i8') return view.getInt8(i);
    if (form === 'split') return view.getUint8(i) - view.getUint8(32 + i);
    // i16-nibbles: q[0, 2, .., 14], q[16, 18, .., 30], q[1, 3, .., 15], q[17, 19, .., 31].
    const within = i % 16;
    const position = 16 * (within % 2) + 8 * (i >= 16 ? 1 : 0) + (within >> 1);
    return view.getInt16(2 * position, true);
  });
}

/**
 * Blocks of x (of 32 values, or `size`): random, zeros, ties (max 127, so the step is 1 and halves are exact: 2.5 rounds to 2, 3.5 to 4), one
 * large value among tiny ones, all negative.
 */
function blocksOf(count: number, size = 32): Float32Array {
  const x = new Float32Array(size * count);
  for (let b = 0; b < count; b++) {
    for (let i = 0; i < size; i++) {
      const kind = b % 5;
      x[size * b + i] =
        kind === 0
          ? random() * 3
          : kind === 1
            ? 0
            : kind === 2
              ? i === 0
                ? 127
                : (i % 2 ? -1 : 1) * (0.5 + (i % 7))
              : kind === 3
                ? i === 9
                  ? 5e4
                  : 1e-3 * random()
                : -Math.abs(random()) - 0.25;
    }
  }
  return x;
}

describe('quantizeActivations (WebAssembly)', () => {
  for (const form of ['i16', 'i16-nibbles', 'i8', 'split'] as const) {
    it(`${form}: codes, scales and -2 · sum(q) of every block as the f32 rule gives them, ties to even`, () => {
      const runtime = wasmForTests();
      if (!runtime) return;
      const count = 23;
      const values = blocksOf(count);
      const x = new CpuStorage('f32', values.length, false);
      x.f32.set(values);
      const out = quantizeActivations(runtime, x, count, form);
      if (out === undefined) throw new Error('the heap could not hold the scratch');
      const memory = runtime.heap.memory.buffer as ArrayBuffer;
      const blockBytes = form === 'i8' ? 32 : 64;
      for (let b = 0; b < count; b++) {
        const want = referenceBlock(values.subarray(32 * b, 32 * (b + 1)));
        const codes = readCodes(form, memory, out.codes + b * blockBytes);
        expect(codes, `block ${b}`).toEqual(want.codes);
        expect(new Float32Array(memory, out.scales, count)[b], `scale of block ${b}`).toBe(want.scale);
        const sum = want.codes.reduce((a, q) => a + q, 0);
        expect(new Int32Array(memory, out.bias, count)[b], `bias of block ${b}`).toBe(-2 * sum + 0);
      }
      // The tie block: 2.5 → 2, -3.5 → -4 (ties to even), and 127 → 127.
      expect(referenceBlock(values.subarray(64, 96)).codes.slice(0, 4)).toEqual([127, -2, 2, -4]);
      x.free();
    });
  }
});

describe('quantizeSuperBlocks (WebAssembly)', () => {
  for (const type of ['q4_k', 'q6_k'] as const) {
    for (const form of ['i16', 'i8'] as const) {
      it(`${type}, ${form}: codes, scales and sums of every super-block as the f32 rule gives them, laid out for the kernel`, () => {
        const runtime = wasmForTests();
        if (!runtime) return;
        const count = 7;
        const values = blocksOf(count, 256);
        const x = new CpuStorage('f32', values.length, false);
        x.f32.set(values);
        const out = quantizeSuperBlocks(runtime, x, count, type, form);
        if (out === undefined) throw new Error('the heap could not hold the scratch');
        const memory = runtime.heap.memory.buffer as ArrayBuffer;
        // Codes per sum: Q6_K's byte kernel takes off its offset per 16 codes, the others per 32.
        const span = form === 'i8' && type === 'q6_k' ? 16 : 32;
        for (let b = 0; b < count; b++) {
          const want = referenceBlock(values.subarray(256 * b, 256 * (b + 1)));
          expect(new Float32Array(memory, out.scales, count)[b], `scale of super-block ${b}`).toBe(
            want.scale,
          );
          const view = new DataView(memory, out.codes + b * X_SUPER_BLOCK_BYTES);
          const codes = Array.from({ length: 256 }, (_, i) => {
            if (form === 'i8') return view.getInt8(i);
            const [group, within] = [i >> 5, i % 32];
            const position = type === 'q4_k' ? X_ORDER.indexOf(within) : within;
            return view.getInt16(64 * group + 2 * position, true);
          });
          expect(codes, `super-block ${b}`).toEqual(want.codes);
          const sumsAt = form === 'i8' ? X_BYTE_SUMS : X_SUMS;
          for (let s = 0; s < 256 / span; s++) {
            const sum = want.codes.slice(span * s, span * (s + 1)).reduce((a, q) => a + q, 0);
            expect(view.getInt16(sumsAt + 2 * s, true), `sum ${s} of super-block ${b}`).toBe(sum);
          }
        }
        x.free();
      });
    }
  }
});
