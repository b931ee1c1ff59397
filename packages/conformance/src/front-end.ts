import {
  add,
  assign,
  attention,
  type Backend,
  concat,
  empty,
  keep,
  matmul,
  ones,
  reshape,
  scope,
  sum,
  type Tensor,
  tensor,
  zeros,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { ReferenceBackend } from './reference/index';

/** Bad input, disposal and scope behaviour of the front-end, on the given backend. */
export function describeFrontEnd(getBackend: () => Backend): void {
  describe('front-end errors and scopes', () => {
    it('names the op and both shapes on a shape mismatch', () => {
      const backend = getBackend();
      scope(() => {
        const a = zeros([2, 3], { backend });
        const b = zeros([4, 3], { backend });
        expect(() => add(a, b)).toThrow(/add: shapes \[2, 3\] and \[4, 3\] cannot be broadcast/);
        expect(() => matmul(a, b)).toThrow(/matmul: inner dimensions differ: \[2, 3\] x \[4, 3\]/);
        expect(() => concat([a, zeros([2, 4], { backend })], 0)).toThrow(/concat: shapes \[2, 3\], \[2, 4\]/);
        expect(() => reshape(a, [4, 2])).toThrow(
          /reshape: cannot reshape \[2, 3\] \(6 elements\) to \[4, 2\]/,
        );
        expect(() =>
          attention(
            zeros([1, 2, 3, 4], { backend }),
            zeros([1, 2, 2, 4], { backend }),
            zeros([1, 2, 2, 4], { backend }),
          ),
        ).toThrow(/Hkv must divide H/);
      });
    });

    it('copies the host values a tensor is made of: changing the array afterwards changes nothing', async () => {
      const backend = getBackend();
      const sources = [Float32Array.of(1, 2), Float64Array.of(1, 2), Int32Array.of(1, 2)];
      const made = sources.map((values) => tensor(values, [2], { backend }));
      for (const values of sources) values.fill(9);
      for (const t of made) expect(Array.from(await t.data())).toEqual([1, 2]);
      for (const t of made) t.dispose();
    });

    it('names the bad attention option and what it must be', () => {
      const backend = getBackend();
      scope(() => {
        const q = zeros([2, 3, 2, 4], { backend }); // [B, T, H, hd]
        const kv = zeros([2, 5, 1, 4], { backend }); // [B, S, Hkv, hd]
        const run = (options: Parameters<typeof attention>[3]) => () => attention(q, kv, kv, options);
        expect(run({ mask: { kind: 'prefix', length: 6 } })).toThrow(
          /attention: mask.length \(the prefix\) must be an integer in \[0, 5\], got 6/,
        );
        expect(run({ window: -1 })).toThrow(/attention: window must be an integer in \[0, \d+\], got -1/);
        expect(run({ keyLengths: [5] })).toThrow(/keyLengths needs one length per batch row \(2\), got 1/);
        expect(run({ keyLengths: [5, 7] })).toThrow(
          /each of keyLengths must be an integer in \[0, 5\], got 7/,
        );
        expect(run({ offset: 3 })).toThrow(/offset 3 with 3 queries needs 6 keys, got 5/);
        expect(run({ mask: { kind: 'none' }, offset: 3 })).not.toThrow();
      });
    });

    it('names both dtypes on a dtype mismatch', () => {
      const backend = getBackend();
      scope(() => {
        const f = zeros([3], { backend });
        const i = zeros([3], { backend, dtype: 'i32' });
        expect(() => add(f, i)).toThrow(/add: dtype mismatch, got f32 and i32/);
        expect(() => f.gather(f)).toThrow(/gather \(ids\): expected dtype i32, got f32/);
      });
    });

    it('refuses to use or read a disposed tensor', async () => {
      const backend = getBackend();
      const t = ones([2, 2], { backend });
      t.dispose();
      expect(() => t.add(1)).toThrow(/was disposed/);
      await expect(t.data()).rejects.toThrow(/data: .* was disposed/);
      t.dispose();
    });

    it('refuses to mix tensors of two backends', () => {
      const backend = getBackend();
      const other = new ReferenceBackend();
      scope(() => {
        const a = ones([2], { backend });
        const b = ones([2], { backend: other });
        expect(() => add(a, b)).toThrow(/add: tensors live on different backends/);
      });
      expect(other.liveCount()).toBe(0);
    });

    it('refuses an async function in scope and frees what a failed scope made', async () => {
      const backend = getBackend();
      const before = backend.liveCount();
      expect(() => scope(async () => ones([2], { backend }))).toThrow(/scope: got an async function/);
      expect(() => scope(() => Promise.resolve(ones([2], { backend })))).toThrow(/returned a Promise/);
      expect(() =>
        scope(() => {
          ones([3], { backend });
          throw new Error('boom');
        }),
      ).toThrow('boom');
      await Promise.resolve();
      expect(backend.liveCount()).toBe(before);
    });

    it('frees scope temporaries but keeps returned and kept tensors, and shares storage on reshape', async () => {
      const backend = getBackend();
      const before = backend.liveCount();
      let kept: Tensor | undefined;
      const { total, pair } = scope(() => {
        const x = tensor([1, 2, 3, 4], [2, 2], { backend });
        const doubled = x.mul(2);
        kept = keep(doubled.add(1));
        const inner = scope(() => [x.sum(), x.reshape([4])]);
        return { total: sum(doubled), pair: inner };
      });
      expect(backend.liveCount() - before, 'total, x.sum(), x kept alive by its reshaped view, kept').toBe(4);
      expect(await total.item()).toBe(20);
      expect(await pair[0].item()).toBe(10);
      expect(Array.from(await pair[1].data())).toEqual([1, 2, 3, 4]);
      expect(Array.from(await (kept as Tensor).data())).toEqual([3, 5, 7, 9]);
      for (const t of [total, ...pair, kept as Tensor]) t.dispose();
      expect(backend.liveCount()).toBe(before);
    });

    it('empty makes a tensor of the shape and dtype asked that an in-place op fills (zeros without alloc)', async () => {
      const backend = getBackend();
      const before = backend.liveCount();
      const ids = empty([2, 3], { backend, dtype: 'i32' });
      expect([ids.shape, ids.dtype]).toEqual([[2, 3], 'i32']);
      const out = empty([2, 2], { backend });
      const values = tensor([1, 2, 3, 4], [2, 2], { backend });
      assign(out, values);
      expect(Array.from(await out.data())).toEqual([1, 2, 3, 4]);
      expect(() => empty([2, -1], { backend })).toThrow(/empty/);
      for (const t of [ids, out, values]) t.dispose();
      expect(backend.liveCount()).toBe(before);
      const plain = new ReferenceBackend(); // no alloc
      expect(Array.from(await empty([3], { backend: plain }).data())).toEqual([0, 0, 0]);
    });
  });
}
