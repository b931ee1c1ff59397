import { matmul, setBackend, softmax, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

describe.skipIf(!backend)('smoke', () => {
  it('adds', async () => {
    setBackend(backend!);
    const a = tensor([1, 2, 3]);
    const b = tensor([10, 20, 30]);
    expect(await a.add(b).array()).toEqual([11, 22, 33]);
    const m = matmul(
      tensor([
        [1, 2],
        [3, 4],
      ]),
      tensor([
        [5, 6],
        [7, 8],
      ]),
    );
    expect(await m.array()).toEqual([19, 22, 43, 50]);
    expect(await softmax(tensor([0, 0])).array()).toEqual([0.5, 0.5]);
  });
});
