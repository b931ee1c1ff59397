import {
  arange,
  argmax,
  attention,
  fusedOps,
  gather,
  normalAt,
  rand,
  randn,
  rope,
  scatterAdd,
  softmax,
  softmaxCrossEntropy,
  sum,
  tensor,
  uniformAt,
  where,
  zeros,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { nodeBackend } from './node-gpu';
import { attention64, matmul64, maxAbsDiff, seeded, softmax64 } from './reference';

const backend = await nodeBackend();

describe.skipIf(!backend)('kernels (lavapipe)', () => {
  const b = backend!;
  const f32 = (values: ArrayLike<number>, shape: number[]) =>
    tensor(Float32Array.from(values), shape, { backend: b });
  const i32 = (values: number[], shape: number[]) => tensor(Int32Array.from(values), shape, { backend: b });

  describe('elementwise', () => {
    it('gelu is the tanh approximation, silu is x * sigmoid(x)', async () => {
      const xs = [-6, -1.5, -0.01, 0, 0.3, 2, 9];
      const gelu = (x: number) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
      const silu = (x: number) => x / (1 + Math.exp(-x));
      expect(maxAbsDiff(await f32(xs, [7]).gelu().data(), xs.map(gelu))).toBeLessThan(1e-6);
      expect(maxAbsDiff(await f32(xs, [7]).silu().data(), xs.map(silu))).toBeLessThan(1e-6);
      expect(Array.from(await f32([4, 0.25], [2]).rsqrt().data())).toEqual([0.5, 2]);
      expect(Array.from(await f32([4, -0.5], [2]).recip().data())).toEqual([0.25, -2]);
    });

    it('tanh saturates without overflow', async () => {
      expect(Array.from(await f32([-100, 100, 0], [3]).tanh().data())).toEqual([-1, 1, 0]);
    });

    it('i32 division truncates toward zero and x / 0 = x; neg and abs work on i32', async () => {
      const a = i32([7, -7, 7, -7, 5], [5]);
      const d = i32([2, 2, -2, -2, 0], [5]);
      expect(await a.div(d).array()).toEqual([3, -3, -3, 3, 5]);
      expect(await a.neg().array()).toEqual([-7, 7, -7, 7, -5]);
      expect(await a.abs().array()).toEqual([7, 7, 7, 7, 5]);
      expect(await a.maximum(d).array()).toEqual([7, 2, 7, -2, 5]);
    });

    it('pow follows JavaScript for negative bases and zero', async () => {
      const x = f32([-2, -2, -8, 0, 0, 3, 1], [7]);
      const y = f32([3, 2, 1 / 3, 2, -1, 0, 1e9], [7]);
      const got = Array.from(await x.pow(y).data());
      const want = [-8, 4, Number.NaN, 0, Number.POSITIVE_INFINITY, 1, 1];
      got.forEach((v, i) => {
        if (Number.isFinite(want[i])) expect(v).toBeCloseTo(want[i], 5);
        else expect(v).toBe(want[i]);
      });
    });

    it('compare gives an i32 mask and where takes any nonzero f32 condition', async () => {
      const mask = f32([1, 2, 3], [3]).lt(f32([2], [1]));
      expect(mask.dtype).toBe('i32');
      expect(await mask.array()).toEqual([1, 0, 0]);
      const picked = where(f32([0, -0.5, 2], [3]), f32([1, 1, 1], [3]), f32([9], [1]));
      expect(await picked.array()).toEqual([9, 1, 1]);
    });

    it('casts f32 to i32 toward zero', async () => {
      expect(await f32([-2.7, -0.5, 0.5, 2.7], [4]).cast('i32').array()).toEqual([-2, 0, 0, 2]);
    });
  });

  describe('reductions', () => {
    it('sums a million values to float64 accuracy', async () => {
      const n = 1_000_000;
      const values = seeded(n, 3).map((v) => v + 1);
      const exact = values.reduce((a, v) => a + v, 0);
      const got = await sum(f32(values, [n])).item();
      expect(Math.abs(got - exact) / exact).toBeLessThan(1e-6);
    });

    it('sums 100000 values of mixed sign close to float64', async () => {
      const values = seeded(100_000, 14);
      const exact = values.reduce((a, v) => a + v, 0);
      expect(Math.abs((await sum(f32(values, [100_000])).item()) - exact)).toBeLessThan(5e-4);
    });

    it('sums long columns (inner > 1) accurately', async () => {
      const rows = 20_000;
      const values = seeded(rows * 3, 4).map((v) => v + 1);
      const got = await sum(f32(values, [rows, 3]), 0).data();
      for (let c = 0; c < 3; c++) {
        let exact = 0;
        for (let r = 0; r < rows; r++) exact += values[r * 3 + c];
        expect(Math.abs(got[c] - exact) / exact).toBeLessThan(1e-6);
      }
    });

    it('argmax returns the first of equal maxima in short and long rows', async () => {
      const long = new Float32Array(1000);
      long[700] = 5;
      long[300] = 5;
      long[900] = 5;
      expect(await argmax(f32(long, [1000])).item()).toBe(300);
      expect(await argmax(f32([1, 3, 3, 2], [4])).item()).toBe(1);
      expect(await argmax(f32([-1, -1, -1], [3])).item()).toBe(0);
    });

    it('splits more than 65535 row workgroups over two grid dimensions', async () => {
      const rows = 70_000;
      const x = zeros([rows, 130], { backend: b }).add(arange(130, 0, 1, { backend: b })); // [rows, 130]
      const totals = await sum(x, 1).data();
      expect(totals.length).toBe(rows);
      expect(totals.every((v) => v === (129 * 130) / 2)).toBe(true);
      const best = await argmax(x, 1).data();
      expect(best.every((v) => v === 129)).toBe(true);
    });
  });

  describe('matmul', () => {
    const cases = [
      { m: 1, n: 300, k: 288, transB: true },
      { m: 1, n: 257, k: 65, transB: false },
      { m: 1, n: 37, k: 30, transB: true },
      { m: 67, n: 33, k: 129, transB: false },
      { m: 5, n: 70, k: 17, transB: true },
    ];
    for (const { m, n, k, transB } of cases) {
      it(`[${m}, ${k}] x [${k}, ${n}]${transB ? ' (B stored [n, k])' : ''} matches float64`, async () => {
        const a = seeded(m * k, m + k);
        const w = seeded(k * n, n);
        const got = await f32(a, [m, k])
          .matmul(f32(w, transB ? [n, k] : [k, n]), { transB })
          .data();
        expect(maxAbsDiff(got, matmul64(a, w, m, n, k, transB))).toBeLessThan(1e-4);
      });
    }

    it('decodes against a 32000-row weight in one matrix-vector product', async () => {
      const k = 288;
      const n = 32_000;
      const a = seeded(k, 1);
      const w = seeded(n * k, 2);
      const got = await f32(a, [1, k])
        .matmul(f32(w, [n, k]), { transB: true })
        .data();
      expect(maxAbsDiff(got, matmul64(a, w, 1, n, k, true))).toBeLessThan(1e-4);
    });

    it('broadcasts a shared right operand over a batch (stride 0) and transposes A', async () => {
      const a = seeded(2 * 3 * 4, 5);
      const w = seeded(3 * 5, 6);
      const got = await f32(a, [2, 3, 4])
        .matmul(f32(w, [1, 3, 5]), { transA: true })
        .data();
      for (let batch = 0; batch < 2; batch++) {
        const at = Float32Array.from(
          { length: 12 },
          (_, i) => a[batch * 12 + (i % 3) * 4 + Math.floor(i / 3)],
        );
        const want = matmul64(at, w, 4, 5, 3, false);
        expect(maxAbsDiff(got.slice(batch * 20, batch * 20 + 20), want)).toBeLessThan(1e-5);
      }
    });
  });

  describe('indexing', () => {
    it('gathers rows and gives zeros for out-of-range ids', async () => {
      const table = i32([1, 2, 3, 4, 5, 6], [3, 2]);
      expect(await gather(table, i32([2, -1, 0, 3], [2, 2])).array()).toEqual([5, 6, 0, 0, 1, 2, 0, 0]);
    });

    it('scatter-adds duplicate ids exactly and deterministically, skipping out-of-range ids', async () => {
      const ids = i32([1, 0, 1, 5, 1, -2], [2, 3]);
      const src = f32([1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60], [2, 3, 2]);
      const out = scatterAdd(src, ids, 3);
      expect(out.shape).toEqual([3, 2]);
      expect(await out.array()).toEqual([2, 20, 9, 90, 0, 0]);
      const many = Int32Array.from({ length: 5000 }, (_, i) => (i * 7919) % 13);
      const values = seeded(5000 * 4, 9);
      const first = await scatterAdd(f32(values, [5000, 4]), tensor(many, [5000], { backend: b }), 13).data();
      const second = await scatterAdd(
        f32(values, [5000, 4]),
        tensor(many, [5000], { backend: b }),
        13,
      ).data();
      expect(Array.from(second)).toEqual(Array.from(first));
      const exact = new Float64Array(13 * 4);
      many.forEach((row, i) => {
        for (let c = 0; c < 4; c++) exact[row * 4 + c] += values[i * 4 + c];
      });
      expect(maxAbsDiff(first, exact)).toBeLessThan(1e-4);
    });
  });

  describe('random', () => {
    it('reproduces uniformAt bit for bit', async () => {
      for (const seed of [0, 42, -7, 2 ** 32 - 1]) {
        const got = await rand([100_000], { seed, backend: b }).data();
        const want = Float32Array.from({ length: 100_000 }, (_, i) => uniformAt(seed, i));
        expect(Array.from(got)).toEqual(Array.from(want));
      }
    });

    it('reproduces normalAt to float rounding', async () => {
      const got = await randn([100_000], { seed: 11, backend: b }).data();
      let worst = 0;
      for (let i = 0; i < got.length; i++) {
        const want = normalAt(11, i);
        worst = Math.max(worst, Math.abs(got[i] - want) / Math.max(1, Math.abs(want)));
      }
      expect(worst).toBeLessThan(2e-6);
    });
  });

  describe('fused', () => {
    it('softmax over 32000 logits sums to one and matches float64', async () => {
      const logits = seeded(32_000, 8).map((v) => 8 * v);
      const got = await softmax(f32(logits, [1, 32_000])).data();
      expect(maxAbsDiff(got, softmax64(logits))).toBeLessThan(1e-7);
      expect(Math.abs(Array.from(got).reduce((a, v) => a + v, 0) - 1)).toBeLessThan(1e-5);
    });

    it('attention with grouped heads and a KV offset matches float64, in decode and prefill', async () => {
      for (const shape of [
        { b: 1, t: 1, s: 300, h: 6, hkv: 2, hd: 48, offset: 299 },
        { b: 2, t: 70, s: 75, h: 4, hkv: 1, hd: 16, offset: 5 },
      ]) {
        const { b: batch, t, s, h, hkv, hd, offset } = shape;
        const q = seeded(batch * t * h * hd, 1);
        const k = seeded(batch * s * hkv * hd, 2);
        const v = seeded(batch * s * hkv * hd, 3);
        const got = await attention(
          f32(q, [batch, t, h, hd]),
          f32(k, [batch, s, hkv, hd]),
          f32(v, [batch, s, hkv, hd]),
          {
            offset,
          },
        ).data();
        expect(maxAbsDiff(got, attention64(q, k, v, shape))).toBeLessThan(1e-5);
      }
    });

    it('rope at position 1000 matches float64 angles', async () => {
      const hd = 64;
      const x = seeded(hd, 4);
      const got = await rope(f32(x, [1, 1, 1, hd]), { offset: 1000, theta: 10_000 }).data();
      const want = new Float64Array(hd);
      for (let i = 0; i < hd / 2; i++) {
        const angle = 1000 * 10_000 ** ((-2 * i) / hd);
        want[2 * i] = x[2 * i] * Math.cos(angle) - x[2 * i + 1] * Math.sin(angle);
        want[2 * i + 1] = x[2 * i] * Math.sin(angle) + x[2 * i + 1] * Math.cos(angle);
      }
      expect(maxAbsDiff(got, want)).toBeLessThan(1e-4);
    });

    it('rope with an offset per batch entry, more entries than one launch carries, matches float64 angles', async () => {
      const [entries, hd] = [1500, 8];
      const x = seeded(entries * hd, 6);
      const positions = Array.from({ length: entries }, (_, b) => (b * 37) % 1001);
      const got = await rope(f32(x, [entries, 1, 1, hd]), { positions, theta: 10_000 }).data();
      const want = new Float64Array(entries * hd);
      for (let b = 0; b < entries; b++) {
        for (let i = 0; i < hd / 2; i++) {
          const angle = positions[b] * 10_000 ** ((-2 * i) / hd);
          const [x0, x1] = [x[b * hd + 2 * i], x[b * hd + 2 * i + 1]];
          want[b * hd + 2 * i] = x0 * Math.cos(angle) - x1 * Math.sin(angle);
          want[b * hd + 2 * i + 1] = x0 * Math.sin(angle) + x1 * Math.cos(angle);
        }
      }
      expect(maxAbsDiff(got, want)).toBeLessThan(1e-4);
    });

    it('cross-entropy is 0 when every row is ignored and agrees with the composite otherwise', async () => {
      const logits = f32(seeded(4 * 9, 5), [4, 9]);
      expect(await softmaxCrossEntropy(logits, i32([-100, -100, -100, -100], [4])).item()).toBe(0);
      const targets = i32([3, -100, 8, 0], [4]);
      const fused = await softmaxCrossEntropy(logits, targets).item();
      const composite = await fusedOps.softmaxCrossEntropy.composite(logits, targets, -100).item();
      expect(Math.abs(fused - composite)).toBeLessThan(1e-5);
    });
  });
});
