import { CpuBackend } from '@loom/backend-cpu';
import {
  attention,
  type Backend,
  gather,
  matmul,
  rmsnorm,
  rope,
  scope,
  type Tensor,
  tensor,
  writeSlice,
} from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import type { DeviceFeatures } from '../src/device-features';
import type { WebGPUBackend } from '../src/index';
import { matvec } from '../src/kernels/matvec';
import { GpuRuntime, type WebGPUStats } from '../src/runtime';
import { nodeBackend, plainNodeBackend } from './node-gpu';
import { matmul64, maxAbsDiff, seeded } from './reference';

const backend = await nodeBackend();
const plain = await plainNodeBackend();

/** A one-layer decoder over a KV cache of `capacity` positions, written with tensor ops on `b`. */
class TinyDecoder {
  static readonly dim = 32;
  static readonly heads = 4;
  static readonly vocab = 96;
  readonly #b: Backend;
  readonly #table: Tensor; // [vocab, dim]
  readonly #wq: Tensor; // [dim, dim]
  readonly #wk: Tensor;
  readonly #wv: Tensor;
  readonly #wo: Tensor;
  readonly #norm: Tensor; // [dim]
  readonly #keys: Tensor; // [1, capacity, heads, hd]
  readonly #values: Tensor;
  #position = 0;

  constructor(b: Backend, capacity: number) {
    const { dim, heads, vocab } = TinyDecoder;
    const f32 = (length: number, seed: number, shape: number[]) =>
      tensor(Float32Array.from(seeded(length, seed)), shape, { backend: b });
    this.#b = b;
    this.#table = f32(vocab * dim, 1, [vocab, dim]);
    [this.#wq, this.#wk, this.#wv, this.#wo] = [2, 3, 4, 5].map((seed) => f32(dim * dim, seed, [dim, dim]));
    this.#norm = f32(dim, 6, [dim]);
    const cache = [1, capacity, heads, dim / heads];
    this.#keys = tensor(new Float32Array(capacity * dim), cache, { backend: b });
    this.#values = tensor(new Float32Array(capacity * dim), cache, { backend: b });
  }

  /** Logits [vocab] after `token`, appending its keys and values to the cache. */
  step(token: number): Tensor {
    const { dim, heads } = TinyDecoder;
    const hd = dim / heads;
    const offset = this.#position++;
    return scope(() => {
      const ids = tensor(Int32Array.of(token), [1, 1], { backend: this.#b }); // [1, 1]
      const x = gather(this.#table, ids).reshape([1, dim]); // [1, dim]
      const h = rmsnorm(x, this.#norm, 1e-5); // [1, dim]
      const q = rope(matmul(h, this.#wq, { transB: true }).reshape([1, 1, heads, hd]), { offset }); // [1, 1, H, hd]
      const k = rope(matmul(h, this.#wk, { transB: true }).reshape([1, 1, heads, hd]), { offset });
      const v = matmul(h, this.#wv, { transB: true }).reshape([1, 1, heads, hd]);
      writeSlice(this.#keys, k, [0, offset, 0, 0]);
      writeSlice(this.#values, v, [0, offset, 0, 0]);
      const att = attention(q, this.#keys, this.#values, { mask: { kind: 'causal' }, offset }).reshape([
        1,
        dim,
      ]); // [1, dim]
      const y = x.add(matmul(att, this.#wo, { transB: true })); // [1, dim]
      return matmul(y, this.#table, { transB: true }).reshape([TinyDecoder.vocab]); // [vocab]
    });
  }
}

function delta(after: WebGPUStats, before: WebGPUStats) {
  return {
    dispatches: after.dispatches - before.dispatches,
    submits: after.submits - before.submits,
    buffersCreated: after.buffersCreated - before.buffersCreated,
    paramUploads: after.paramUploads - before.paramUploads,
    pipelinesCompiled: after.pipelinesCompiled - before.pipelinesCompiled,
  };
}

describe.skipIf(!backend)('steady-state decode counts (lavapipe)', () => {
  it('after 3 warm-up tokens, tokens 4..10 create no buffers and submit one command buffer each', async () => {
    const b = backend as WebGPUBackend;
    const model = new TinyDecoder(b, 16);
    const steps: ReturnType<typeof delta>[] = [];
    let token = 1;
    for (let i = 0; i < 10; i++) {
      const before = b.stats();
      const logits = model.step(token);
      const id = logits.argmax(0);
      const total = logits.sum();
      const [[next], [check]] = await Promise.all([id.data(), total.data()]);
      expect(Number.isFinite(check)).toBe(true);
      token = next;
      for (const t of [logits, id, total]) t.dispose();
      steps.push(delta(b.stats(), before));
    }
    expect(steps[0].buffersCreated).toBeGreaterThan(0); // the first step fills the pool
    for (const step of steps.slice(3)) {
      expect(step.buffersCreated).toBe(0);
      expect(step.submits).toBe(1);
      expect(step.paramUploads).toBe(1);
      expect(step.pipelinesCompiled).toBe(0);
      expect(step.dispatches).toBe(steps[3].dispatches);
    }
    expect(steps[3].dispatches).toBeGreaterThan(8);
  });
});

/** The matvec kernel's three ways through B stored [n, k], chosen by the features a runtime sees. */
const paths: readonly { readonly name: string; readonly features: Partial<DeviceFeatures> }[] = [
  { name: 'thread per row (CPU rasterisers)', features: { software: true } },
  { name: 'workgroup per row, shared-memory sums', features: { software: false, subgroups: false } },
  { name: 'workgroup per row, subgroup sums', features: { software: false, subgroups: true } },
];

describe.skipIf(!backend)('matvec paths against the CPU backend and float64', () => {
  const cpu = new CpuBackend();
  const shapes = [
    { batch: 1, n: 300, k: 288 }, // vec4 loads
    { batch: 1, n: 37, k: 30 }, // scalar loads
    { batch: 1, n: 5, k: 2052 }, // rows longer than a workgroup's stride
    { batch: 1, n: 1000, k: 4 },
    { batch: 3, n: 20, k: 64 }, // a stride between batches
  ];

  it("the default device has the adapter's subgroups; a plain device has no optional feature", () => {
    expect(backend?.features.subgroups).toBe(backend?.device.features.has('subgroups'));
    expect(plain?.features.subgroups).toBe(false);
    expect(plain?.features.shaderF16).toBe(false);
    expect(() => new GpuRuntime(plain!.device, { subgroups: true })).toThrow(/lacks subgroups/);
  });

  for (const path of paths) {
    it(`${path.name}: [batch, 1, k] x [batch, n, k]ᵀ matches`, async () => {
      const device = (backend as WebGPUBackend).device;
      if (path.features.subgroups && !device.features.has('subgroups')) {
        // No subgroups on this adapter: the path cannot be asked for (and is never chosen).
        expect(() => new GpuRuntime(device, path.features)).toThrow(/lacks subgroups/);
        return;
      }
      const rt = new GpuRuntime(device, path.features);
      for (const { batch, n, k } of shapes) {
        const a = seeded(batch * k, n + 1);
        const w = seeded(batch * n * k, k + 2);
        const spec = {
          batch,
          m: 1,
          n,
          k,
          transA: false,
          transB: true,
          aBatchStride: batch > 1 ? k : 0,
          bBatchStride: batch > 1 ? n * k : 0,
        };
        const out = matvec(
          rt,
          { id: rt.upload(a), shape: [batch, 1, k], dtype: 'f32' },
          { id: rt.upload(w), shape: [batch, n, k], dtype: 'f32' },
          spec,
        );
        const got = await rt.read(out);
        const want = await matmul(
          tensor(a, [batch, 1, k], { backend: cpu }),
          tensor(w, [batch, n, k], { backend: cpu }),
          { transB: true },
        ).data();
        const tolerance = 1e-5 * Math.sqrt(k);
        expect(maxAbsDiff(got, want)).toBeLessThan(tolerance);
        for (let i = 0; i < batch; i++) {
          const exact = matmul64(
            a.slice(i * k, (i + 1) * k),
            w.slice(i * n * k, (i + 1) * n * k),
            1,
            n,
            k,
            true,
          );
          expect(maxAbsDiff(got.slice(i * n, (i + 1) * n), exact)).toBeLessThan(tolerance);
        }
      }
      await rt.sync();
    });
  }

  it('a device without optional features decodes like the default one', async () => {
    const [n, k] = [300, 288];
    const a = seeded(k, 3);
    const w = seeded(n * k, 4);
    const product = (b: Backend) =>
      matmul(tensor(a, [1, k], { backend: b }), tensor(w, [n, k], { backend: b }), { transB: true }).data();
    expect(maxAbsDiff(await product(plain as WebGPUBackend), matmul64(a, w, 1, n, k, true))).toBeLessThan(
      1e-4,
    );
    expect(maxAbsDiff(await product(backend as WebGPUBackend), matmul64(a, w, 1, n, k, true))).toBeLessThan(
      1e-4,
    );
  });
});
