import { CpuBackend } from '@loom/backend-cpu';
import { QuantizedWeight, setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { Linear } from '../src/index';

const backend = new CpuBackend();
beforeAll(() => setBackend(backend));

describe('Linear.releaseWeight', () => {
  it('frees the f32 weight of a layer that reads quantized blocks, which its product still reads', async () => {
    const linear = new Linear(32, 2, { bias: false, std: 0.02, seed: 1 });
    const bytes = new Uint8Array(64).fill(2); // Q8_0 codes 2, scale 0.25: every weight 0.5
    linear.useQuantized(
      new QuantizedWeight(
        'q8_0',
        tensor(new Float32Array(2).fill(0.25), [2, 1]),
        tensor(new Int32Array(bytes.buffer), [2, 8], { dtype: 'i32' }),
      ),
    );
    const held = backend.liveBytes();
    linear.releaseWeight();
    expect(held - backend.liveBytes()).toBe(2 * 32 * 4);
    expect(linear.weight.isDisposed).toBe(true);
    const x = tensor(new Float32Array(32).fill(1), [1, 32]);
    const y = linear.forward(x);
    expect(Array.from(await y.data())).toEqual([16, 16]);
    expect(() => linear.weight.add(1)).toThrow(/was disposed and cannot be used/);
    for (const t of [x, y]) t.dispose();
    linear.dispose();
  });

  it('needs no values in loadStateDict once released, and takes none given for it', async () => {
    const linear = new Linear(32, 2, { bias: true, std: 0.02, seed: 1 });
    const bytes = new Uint8Array(64).fill(2); // every weight 0.5, as above
    linear.useQuantized(
      new QuantizedWeight(
        'q8_0',
        tensor(new Float32Array(2).fill(0.25), [2, 1]),
        tensor(new Int32Array(bytes.buffer), [2, 8], { dtype: 'i32' }),
      ),
    );
    linear.releaseWeight();
    const bias = { shape: [2], data: Float32Array.of(1, -1) };
    linear.loadStateDict(new Map([['bias', bias]]));
    linear.loadStateDict(
      new Map([
        ['bias', bias],
        ['weight', { shape: [2, 32], data: new Float32Array(64) }],
      ]),
    );
    expect(linear.weight.isDisposed).toBe(true);
    expect(() => linear.loadStateDict(new Map())).toThrow(/\(missing: bias\)$/);
    const x = tensor(new Float32Array(32).fill(1), [1, 32]);
    const y = linear.forward(x);
    expect(Array.from(await y.data())).toEqual([17, 15]);
    for (const t of [x, y]) t.dispose();
    linear.dispose();
  });

  it('refuses a layer without a quantized weight, which would be left with no weight at all', () => {
    const linear = new Linear(32, 2, { bias: false, std: 0.02, seed: 1 });
    expect(() => linear.releaseWeight()).toThrow(
      /Linear.releaseWeight: the layer \[2, 32\] has no quantized weight to read instead; call useQuantized first/,
    );
    expect(linear.weight.isDisposed).toBe(false);
    linear.dispose();
  });
});
