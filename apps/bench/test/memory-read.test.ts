import { describe, expect, it } from 'vitest';
import { MemoryReadProbe, readModuleBytes } from '../src/memory-read';

describe('the memory read probe', () => {
  it('assembles a module whose read(from, to) sums lane 0 of every f32x4 in the range', () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    const floats = new Float32Array(memory.buffer);
    floats.forEach((_, i) => {
      floats[i] = i % 7;
    });
    const { read } = new WebAssembly.Instance(new WebAssembly.Module(readModuleBytes()), { m: { memory } })
      .exports as { read: (from: number, to: number) => number };
    for (const [from, to] of [
      [0, 64],
      [64, 1024],
      [128, 65536],
    ]) {
      let want = 0;
      for (let i = from / 4; i < to / 4; i += 4) want += floats[i];
      expect(read(from, to), `read(${from}, ${to})`).toBe(want);
    }
  });

  it('measures a positive rate on one and two threads, and refuses more threads than it was made for', async () => {
    const probe = MemoryReadProbe.create(2);
    try {
      for (const threads of [1, 2]) {
        const rate = await probe.gbPerSecond(threads);
        expect(Number.isFinite(rate) && rate > 0, `${threads} thread(s): ${rate} GB/s`).toBe(true);
      }
      await expect(probe.gbPerSecond(3)).rejects.toThrow(/3 threads asked of a probe made for 2/);
    } finally {
      await probe.close();
    }
  });
});
