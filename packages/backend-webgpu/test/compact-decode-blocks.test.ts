import { makeInputs } from '@loom/conformance';
import {
  attentionStep,
  type Backend,
  dequantize,
  HalfWeight,
  type ProductWeight,
  QuantizedWeight,
  type QuantType,
  quantFormat,
  ropeInverseFrequencies,
  swigluBlock,
  type Tensor,
  unpackHalves,
  type WeightFormat,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import type { DeviceFeatures } from '../src/device-features';
import { WebGPUBackend } from '../src/index';
import { nodeBackend, plainNodeBackend } from './node-gpu';
import { maxAbsDiff } from './reference';

const backend = await nodeBackend();
const limited = await plainNodeBackend();

/** The decode blocks' three ways through a unit's rows, chosen by the features a backend sees. */
const paths: readonly { readonly name: string; readonly features: Partial<DeviceFeatures> }[] = [
  { name: 'thread per unit (CPU rasterisers)', features: { software: true } },
  { name: 'workgroup per unit, shared-memory sums', features: { software: false, subgroups: false } },
  { name: 'workgroup per unit, subgroup sums', features: { software: false, subgroups: true } },
];

/** Bounds of uniform scales giving each format's weights an rms of about 0.05 (codes' rms: quantizedMatmul's cases). */
const SCALE_BOUND: Record<QuantType, number> = { q8_0: 1e-3, q4_0: 2e-2, q4_k: 3e-4, q6_k: 6e-5 };

/** A seeded weight [out, inner] of a compact `format` on `b`, and its values widened to f32. */
function weightPair(
  b: Backend,
  format: Exclude<WeightFormat, 'f32'>,
  out: number,
  inner: number,
  seed: number,
): { readonly compact: ProductWeight; readonly f32: Tensor } {
  if (format === 'f16' || format === 'bf16') {
    const halves = { kind: 'halves', type: format, scale: 0.05 } as const;
    const [packed] = makeInputs(b, [{ shape: [out, inner / 2], dist: halves }], seed);
    return { compact: new HalfWeight(format, packed), f32: unpackHalves(format, packed) };
  }
  const { values, words, scales: perBlock } = quantFormat(format);
  const blocks = inner / values;
  const bound = SCALE_BOUND[format];
  const [quants, scales] = makeInputs(
    b,
    [
      { shape: [out, blocks * words], dist: { kind: 'ints', low: -(2 ** 31), high: 2 ** 31 - 1 } },
      { shape: [out, blocks * perBlock], dist: { kind: 'uniform', low: -bound, high: bound } },
    ],
    seed,
  );
  return { compact: new QuantizedWeight(format, scales, quants), f32: dequantize(format, scales, quants) };
}

/** The largest magnitude of `values`, at least 1: the scale a tolerance is relative to. */
function magnitude(values: ArrayLike<number>): number {
  return Array.from(values).reduce((m, v) => Math.max(m, Math.abs(v)), 1);
}

/**
 * Rows of up to 64 blocks, more than a workgroup has threads, so each thread takes several steps of a row (the
 * conformance cases' rows are shorter); 16-bit rows four words a load on GPUs; out aliasing x, so that the output
 * product adds its residual in place.
 */
const swigluShapes = [
  { rows: 2, dim: 2048, hidden: 256, formats: { w1: 'q8_0', w3: 'q6_k', w2: 'q4_k' } },
  { rows: 1, dim: 1024, hidden: 512, formats: { w1: 'q4_0', w3: 'f16', w2: 'q8_0' } },
] as const;
const attentionShapes = [
  { batch: 2, dim: 2048, formats: { wq: 'q8_0', wk: 'q4_k', wv: 'q6_k', wo: 'q4_0' } },
  { batch: 1, dim: 1024, formats: { wq: 'bf16', wk: 'f16', wv: 'q4_0', wo: 'q6_k' } },
] as const;

describe.skipIf(!backend)('decode blocks with compact weights, long rows (lavapipe)', () => {
  for (const path of paths) {
    it(`${path.name}: swigluBlock and attentionStep read compact weights as their f32 values`, async () => {
      const device = (backend as WebGPUBackend).device;
      if (path.features.subgroups && !device.features.has('subgroups')) return; // never chosen there
      const b = await WebGPUBackend.create({ device, features: path.features });
      for (const [i, { rows, dim, hidden, formats }] of swigluShapes.entries()) {
        const [x, norm] = makeInputs(
          b,
          [{ shape: [rows, dim] }, { shape: [dim], dist: { kind: 'positive' } }],
          i,
        );
        const w1 = weightPair(b, formats.w1, hidden, dim, 10 * i + 1);
        const w3 = weightPair(b, formats.w3, hidden, dim, 10 * i + 2);
        const w2 = weightPair(b, formats.w2, dim, hidden, 10 * i + 3);
        const got = await swigluBlock(x, { norm, w1: w1.compact, w3: w3.compact, w2: w2.compact }).data();
        const want = await swigluBlock(x, { norm, w1: w1.f32, w3: w3.f32, w2: w2.f32 }).data();
        expect(maxAbsDiff(got, want), `swigluBlock ${Object.values(formats)}`).toBeLessThan(
          2e-5 * magnitude(want),
        );
      }
      const [heads, kvHeads, hd, positions, offset] = [4, 2, 64, 6, 3];
      for (const [i, { batch, dim, formats }] of attentionShapes.entries()) {
        const norm = makeInputs(b, [{ shape: [dim], dist: { kind: 'positive' } }], i)[0];
        const wq = weightPair(b, formats.wq, heads * hd, dim, 10 * i + 1);
        const wk = weightPair(b, formats.wk, kvHeads * hd, dim, 10 * i + 2);
        const wv = weightPair(b, formats.wv, kvHeads * hd, dim, 10 * i + 3);
        const wo = weightPair(b, formats.wo, dim, heads * hd, 10 * i + 4);
        /** Block output and store after one step of x updated in place, fresh inputs of the same seed each time. */
        const step = async (weights: 'compact' | 'f32') => {
          const store = [batch, positions, kvHeads, hd];
          const [x, keys, values] = makeInputs(
            b,
            [{ shape: [batch, 1, dim] }, { shape: store }, { shape: store }],
            i,
          );
          const projections = { wq: wq[weights], wk: wk[weights], wv: wv[weights], wo: wo[weights] };
          attentionStep(
            x,
            x,
            { norm, ...projections },
            { keys, values },
            {
              offset,
              inverseFrequencies: ropeInverseFrequencies(hd, 10_000),
            },
          );
          return Promise.all([x.data(), keys.data(), values.data()]);
        };
        const got = await step('compact');
        const want = await step('f32');
        for (const [j, name] of ['out', 'keys', 'values'].entries()) {
          const label = `attentionStep ${Object.values(formats)}: ${name}`;
          expect(maxAbsDiff(got[j], want[j]), label).toBeLessThan(2e-5 * magnitude(want[j]));
        }
      }
    });
  }
});

/**
 * Projections' formats and the dispatches of an attention step where a kernel binds at most 8 storage buffers: q, k
 * and v in one take 11 with three quantized weights, 9 with one, 8 with 16-bit ones.
 */
const limitedCases = [
  { formats: { wq: 'q8_0', wk: 'q4_k', wv: 'q6_k', wo: 'q4_0' }, dispatches: 4 },
  { formats: { wq: 'q4_0', wk: 'f16', wv: 'bf16', wo: 'q8_0' }, dispatches: 4 },
  { formats: { wq: 'f16', wk: 'bf16', wv: 'f16', wo: 'q6_k' }, dispatches: 3 },
] as const;

/** Block output, store and dispatches of one attention step on `b` with projections of `formats`. */
async function attentionOn(
  b: WebGPUBackend,
  formats: (typeof limitedCases)[number]['formats'],
  seed: number,
) {
  const [batch, dim, heads, kvHeads, hd, positions] = [2, 512, 4, 2, 64, 6];
  const store = [batch, positions, kvHeads, hd];
  const [x, norm, keys, values] = makeInputs(
    b,
    [
      { shape: [batch, 1, dim] },
      { shape: [dim], dist: { kind: 'positive' } },
      { shape: store },
      { shape: store },
    ],
    seed,
  );
  const projections = {
    wq: weightPair(b, formats.wq, heads * hd, dim, 10 * seed + 1).compact,
    wk: weightPair(b, formats.wk, kvHeads * hd, dim, 10 * seed + 2).compact,
    wv: weightPair(b, formats.wv, kvHeads * hd, dim, 10 * seed + 3).compact,
    wo: weightPair(b, formats.wo, dim, heads * hd, 10 * seed + 4).compact,
  };
  const before = b.stats().dispatches;
  attentionStep(
    x,
    x,
    { norm, ...projections },
    { keys, values },
    { offset: 3, inverseFrequencies: ropeInverseFrequencies(hd, 10_000) },
  );
  const dispatches = b.stats().dispatches - before;
  return { dispatches, data: await Promise.all([x.data(), keys.data(), values.data()]) };
}

describe.skipIf(!backend || !limited)(
  "decode blocks on a device with WebGPU's minimum storage-buffer limit",
  () => {
    it('this adapter allows q, k and v in one dispatch; the limited device allows 8 buffers', () => {
      expect(backend?.limits.maxStorageBuffersPerShaderStage).toBeGreaterThanOrEqual(11);
      expect(limited?.limits.maxStorageBuffersPerShaderStage).toBe(8);
    });
    for (const path of paths.filter(({ features }) => !features.subgroups)) {
      it(`${path.name}: attentionStep splits q, k and v only where they do not fit, with the same results`, async () => {
        const options = { features: path.features };
        const high = await WebGPUBackend.create({ device: (backend as WebGPUBackend).device, ...options });
        const low = await WebGPUBackend.create({ device: (limited as WebGPUBackend).device, ...options });
        for (const [i, { formats, dispatches }] of limitedCases.entries()) {
          const want = await attentionOn(high, formats, i);
          const got = await attentionOn(low, formats, i);
          expect(want.dispatches).toBe(3);
          expect(got.dispatches, `${Object.values(formats)}`).toBe(dispatches);
          for (const [j, name] of ['out', 'keys', 'values'].entries()) {
            const label = `attentionStep ${Object.values(formats)}: ${name}`;
            expect(maxAbsDiff(got.data[j], want.data[j]), label).toBeLessThan(1e-6 * magnitude(want.data[j]));
          }
        }
      });
    }
  },
);
