import { CpuBackend } from '@loom/backend-cpu';
import { attentionStep, type Backend, ropeInverseFrequencies, type Tensor, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from './node-gpu';
import { maxAbsDiff, seeded } from './reference';

const backend = await nodeBackend();

describe.skipIf(!backend)('attentionStep with out aliasing x (lavapipe)', () => {
  it('updates x in place: the output product adds onto the buffer it reads its residual from', async () => {
    const [dim, heads, hd, positions, offset] = [16, 2, 8, 6, 2];
    /** Block output and cache after one step on `b`, with out the same tensor as x when `alias`. */
    const step = async (b: Backend, alias: boolean) => {
      const f32 = (shape: number[], seed: number, scale = 0.3): Tensor =>
        tensor(
          Float32Array.from(
            seeded(
              shape.reduce((p, n) => p * n, 1),
              seed,
            ),
            (v) => v * scale,
          ),
          shape,
          { backend: b },
        );
      const x = f32([1, 1, dim], 1, 1);
      const out = alias ? x : f32([1, 1, dim], 9);
      const weights = {
        norm: f32([dim], 2, 1),
        wq: f32([heads * hd, dim], 3),
        wk: f32([heads * hd, dim], 4),
        wv: f32([heads * hd, dim], 5),
        wo: f32([dim, heads * hd], 6),
      };
      const store = { keys: f32([1, positions, heads, hd], 7), values: f32([1, positions, heads, hd], 8) };
      attentionStep(out, x, weights, store, {
        offset,
        inverseFrequencies: ropeInverseFrequencies(hd, 10_000),
      });
      return { out: await out.float32Data(), keys: await store.keys.float32Data() };
    };
    const want = await step(new CpuBackend(), false);
    const got = await step(backend!, true);
    expect(maxAbsDiff(got.out, want.out)).toBeLessThan(1e-5);
    expect(maxAbsDiff(got.keys, want.keys)).toBeLessThan(1e-5);
  });
});
