import { CpuBackend } from '@loom/backend-cpu';
import {
  type FusedKernels,
  HalfWeight,
  packHalves,
  QuantizedWeight,
  scope,
  setBackend,
  tensor,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { Linear, type TransformerLM as Model, makeConfig, TransformerLM } from '../src/index';
import { TestCache } from './test-cache';

/** A llama whose linears take 32-value blocks (dim and hidden multiples of 32), grouped-query heads. */
const CONFIG = makeConfig('llama', {
  vocabSize: 11,
  dim: 32,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  hiddenDim: 64,
  maxSeqLen: 8,
});

type Format = 'q8_0' | 'q4_0' | 'bf16' | 'f16';

/** `values` [out, in] (in a multiple of 32) as Q8_0 or Q4_0 blocks the way llama.cpp's reference quantizer writes them. */
function quantized(type: 'q8_0' | 'q4_0', values: Float32Array, out: number, inner: number): QuantizedWeight {
  const blocks = inner / 32;
  const scales = new Float32Array(out * blocks);
  const bytes = new Uint8Array(out * blocks * (type === 'q8_0' ? 32 : 16));
  for (let b = 0; b < out * blocks; b++) {
    const block = values.subarray(b * 32, b * 32 + 32);
    const peak = block.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0);
    if (type === 'q8_0') {
      const d = Math.abs(peak) / 127;
      scales[b] = d;
      block.forEach((v, i) => {
        bytes[b * 32 + i] = (d === 0 ? 0 : Math.round(v / d)) & 255;
      });
    } else {
      const d = peak / -8;
      scales[b] = d;
      const code = (v: number) => Math.min(15, Math.max(0, d === 0 ? 8 : Math.round(v / d + 8)));
      for (let i = 0; i < 16; i++) bytes[b * 16 + i] = code(block[i]) | (code(block[i + 16]) << 4);
    }
  }
  return new QuantizedWeight(
    type,
    tensor(scales, [out, blocks]),
    tensor(new Int32Array(bytes.buffer), [out, bytes.length / 4 / out], { dtype: 'i32' }),
  );
}

/** Gives every linear of the blocks a compact copy of its weight, its format picked by `formatOf(layer index)`. */
async function compact(model: Model, formatOf: (layer: number, linear: number) => Format): Promise<void> {
  for (const [l, layer] of model.layers.entries()) {
    const linears = [...layer.modules()].filter((m): m is Linear => m instanceof Linear);
    for (const [i, linear] of linears.entries()) {
      const format = formatOf(l, i);
      const values = await linear.weight.float32Data();
      const [out, inner] = [linear.outFeatures, linear.inFeatures];
      linear.useQuantized(
        format === 'q8_0' || format === 'q4_0'
          ? quantized(format, values, out, inner)
          : new HalfWeight(format, tensor(packHalves(format, values), [out, inner / 2], { dtype: 'i32' })),
      );
      linear.releaseWeight();
    }
  }
}

/** A CPU backend counting its fused decode kernels' calls, or without those kernels (the separate ops run). */
function backendWith(kernels: 'fused' | 'separate'): { backend: CpuBackend; calls: () => number } {
  const backend = new CpuBackend();
  let count = 0;
  const fused: Partial<FusedKernels> = { ...backend.fused };
  const names = ['swigluBlock', 'attentionStep'] as const;
  for (const name of names) {
    const kernel = backend.fused[name];
    if (kernel === undefined) throw new Error(`the CPU backend has no ${name} kernel`);
    if (kernels === 'separate') delete fused[name];
    else {
      const counted = (...args: unknown[]) => {
        count++;
        return (kernel as (...a: unknown[]) => unknown)(...args);
      };
      Object.assign(fused, { [name]: counted });
    }
  }
  Object.defineProperty(backend, 'fused', { value: fused });
  return { backend, calls: () => count };
}

/** The logits of `tokens` fed one at a time through a cache that hands out its storage, with `formatOf`'s weights. */
async function decode(
  kernels: 'fused' | 'separate',
  tokens: readonly number[],
  formatOf: (layer: number, linear: number) => Format,
): Promise<{ logits: number[][]; calls: number }> {
  const { backend, calls } = backendWith(kernels);
  setBackend(backend);
  const model = new TransformerLM(CONFIG).eval();
  await compact(model, formatOf);
  const cache = new TestCache(CONFIG, 1, { reserve: true });
  const logits: number[][] = [];
  for (const [offset, token] of tokens.entries()) {
    const out = scope(() => model.forward(tensor(Int32Array.of(token), [1, 1]), { offset, cache }));
    logits.push(Array.from(await out.data()));
    out.dispose();
  }
  cache.dispose();
  model.dispose();
  return { logits, calls: calls() };
}

describe('a decode step runs both fused halves of a llama block over compact weights', () => {
  const tokens = [3, 1, 4, 1, 5, 9];
  const cases: [string, (layer: number, linear: number) => Format][] = [
    ['Q8_0', () => 'q8_0'],
    ['Q4_0', () => 'q4_0'],
    ['BF16', () => 'bf16'],
    ['a format per layer and linear', (l, i) => (['q8_0', 'q4_0', 'f16', 'bf16'] as const)[(l + i) % 4]],
  ];
  for (const [name, formatOf] of cases) {
    it(`${name}: two fused calls per layer per step, with the very logits of the separate ops`, async () => {
      const fused = await decode('fused', tokens, formatOf);
      const separate = await decode('separate', tokens, formatOf);
      expect(fused.calls).toBe(2 * tokens.length * CONFIG.numLayers);
      // The same kernels in the same order: the same bits.
      expect(fused.logits).toEqual(separate.logits);
      expect(fused.logits.flat().every(Number.isFinite)).toBe(true);
    });
  }
});
