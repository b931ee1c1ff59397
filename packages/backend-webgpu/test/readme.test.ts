import { attention, setBackend, softmax, tensor } from '@loom/tensor';
import { expect, it } from 'vitest';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

it.skipIf(!backend)('runs the README example', async () => {
  setBackend(backend!);
  const x = tensor([
    [1, 2],
    [3, 4],
  ]);
  expect(Array.from(await x.matmul(tensor([[1], [1]])).data())).toEqual([3, 7]);
  const probs = await softmax(tensor([0, Math.log(3)])).data();
  expect(probs[0]).toBeCloseTo(0.25, 6);
  expect(probs[1]).toBeCloseTo(0.75, 6);
  const q = tensor(new Float32Array(1 * 1 * 4 * 8).fill(0.1), [1, 1, 4, 8]);
  const kv = tensor(new Float32Array(1 * 5 * 2 * 8).fill(0.2), [1, 5, 2, 8]);
  expect((await attention(q, kv, kv, { offset: 4 }).data()).length).toBe(32);
});
