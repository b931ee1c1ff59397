import { describe, expect, it } from 'vitest';
import type { WebGPUBackend } from '../src/index';
import { sortIds } from '../src/kernels/sort-ids';
import { GpuRuntime } from '../src/runtime';
import { nodeBackend } from './node-gpu';

const backend = await nodeBackend();

describe.skipIf(!backend)('sortIds (lavapipe)', () => {
  // Sizes within one workgroup's block, at it, just past it (one merge), and many blocks (several spans past it).
  for (const count of [1, 3, 64, 511, 512, 513, 5000]) {
    it(`sorts ${count} ids by id then position, out-of-range ids and the padding last`, async () => {
      const rt = new GpuRuntime((backend as WebGPUBackend).device);
      const rows = 37;
      const ids = Int32Array.from({ length: count }, (_, i) => ((i * 7919) % 41) - 2); // -2..38: some out of range
      const pairs = sortIds(rt, { id: rt.upload(ids), shape: [count], dtype: 'i32' }, rows);
      const got = Array.from(await rt.read(pairs));
      const max = 0x7fffffff;
      const want = Array.from(ids, (id, i) => [id >= 0 && id < rows ? id : max, i]);
      let padded = 1;
      while (padded < count) padded *= 2;
      for (let i = count; i < padded; i++) want.push([max, i]);
      want.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      expect(got).toEqual(want.flat());
    });
  }
});
