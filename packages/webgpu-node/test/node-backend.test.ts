import { tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { nodeWebGPU, webgpuForTests } from '../src/index';

const backend = await webgpuForTests();

describe.skipIf(!backend)('webgpu in Node', () => {
  it('shares one backend per process and computes on it', async () => {
    expect(await nodeWebGPU()).toBe(backend);
    const x = tensor([1, 2, 3], [3], { backend });
    expect(await x.mul(2).array()).toEqual([2, 4, 6]);
  });
});
