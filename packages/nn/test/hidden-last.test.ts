import { CpuBackend } from '@loom/backend-cpu';
import { assign, getBackend, randn, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ConfigInput,
  type ForwardContext,
  forwardBatch,
  type ModelOptions,
  makeConfig,
  type Preset,
  TransformerLM,
} from '../src/index';
import { TestCache } from './test-cache';

const TOKENS = [
  [3, 1, 4, 1, 5, 9, 2, 6, 5, 3],
  [2, 7, 1, 8, 2, 8, 1, 8, 2, 8],
];

function model(preset: Preset, extra: Partial<ConfigInput>, options: ModelOptions = {}): TransformerLM {
  const config = makeConfig(preset, {
    vocabSize: 13,
    dim: 24,
    numLayers: 3,
    numHeads: 4,
    numKvHeads: 2,
    maxSeqLen: 16,
    ...extra,
  });
  const m = new TransformerLM(config, { seed: 5, ...options });
  scope(() => {
    // Biases and norm weights off their initial 0 and 1, so that a path that skipped them would differ.
    for (const [name, p] of m.namedParameters()) {
      if (/(bias|norm\.weight)$/.test(name)) assign(p, p.add(randn(p.shape, { seed: name.length }).mul(0.3)));
    }
  });
  return m.eval();
}

/** The last position's rows [B, dim] of `hidden` and of `hiddenLast` on the same tokens and context. */
async function bothWays(
  m: TransformerLM,
  tokens: number[][],
  ctx: () => ForwardContext,
): Promise<number[][]> {
  const ids = tensor(tokens, undefined, { dtype: 'i32' }); // [B, T]
  const [b, t] = ids.shape;
  const { dim } = m.config;
  const full = scope(() => m.hidden(ids, ctx()).slice([0, t - 1, 0], [b, 1, dim])); // [B, 1, dim]
  const last = m.hiddenLast(ids, ctx()); // [B, 1, dim]
  expect(last.shape).toEqual([b, 1, dim]);
  const out = [Array.from(await full.data()), Array.from(await last.data())];
  for (const x of [ids, full, last]) x.dispose();
  return out;
}

function expectClose(actual: number[], expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  const worst = Math.max(...actual.map((x, i) => Math.abs(x - expected[i])));
  expect(worst).toBeLessThan(1e-5);
}

describe('TransformerLM.hiddenLast', () => {
  beforeAll(() => setBackend(new CpuBackend()));

  const cases: { name: string; preset: Preset; extra: Partial<ConfigInput>; options?: ModelOptions }[] = [
    { name: 'llama', preset: 'llama', extra: {} },
    { name: 'gpt2 (learned positions, biases)', preset: 'gpt2', extra: {} },
    { name: 'post-norm', preset: 'llama', extra: {}, options: { norm: 'post' } },
    {
      name: 'q/k norms and biases (Qwen)',
      preset: 'llama',
      extra: { qkNorm: true, qkvBias: true, headDim: 8 },
    },
    { name: 'sliding window of 4', preset: 'llama', extra: { slidingWindow: 4 } },
    {
      name: 'mixture of experts',
      preset: 'llama',
      extra: { moe: { experts: 4, topK: 2, capacityFactor: 1 } },
    },
  ];
  for (const { name, preset, extra, options } of cases) {
    it(`${name}: equals the last row of hidden, without a cache and after a cached prefix`, async () => {
      const m = model(preset, extra, options);
      const live = getBackend().liveCount();
      const [full, last] = await bothWays(m, TOKENS, () => ({ offset: 0 }));
      expectClose(last, full);
      // A prompt fed after 4 cached positions, each way on its own cache holding the same prefix.
      const ids = (rows: number[][]) => tensor(rows, undefined, { dtype: 'i32' });
      const caches = [new TestCache(m.config), new TestCache(m.config)];
      for (const cache of caches)
        scope(() => m.hidden(ids([TOKENS[0].slice(0, 4)]), { offset: 0, cache })).dispose();
      const rest = ids([TOKENS[0].slice(4)]); // [1, 6]
      const { dim } = m.config;
      const cachedFull = scope(() =>
        m.hidden(rest, { offset: 4, cache: caches[0] }).slice([0, 5, 0], [1, 1, dim]),
      );
      const cachedLast = m.hiddenLast(rest, { offset: 4, cache: caches[1] });
      expectClose(Array.from(await cachedLast.data()), Array.from(await cachedFull.data()));
      // The next step from each cache: hiddenLast stored the keys and values of every position.
      const next = ids([[6]]);
      const steps = caches.map((cache) => m.hidden(next, { offset: 10, cache }));
      expectClose(Array.from(await steps[1].data()), Array.from(await steps[0].data()));
      for (const t of [rest, cachedFull, cachedLast, next, ...steps]) t.dispose();
      for (const cache of caches) cache.dispose();
      expect(getBackend().liveCount()).toBe(live);
      m.dispose();
    });
  }

  it('a prefix LM: equals the last row of hidden with a bidirectional prefix', async () => {
    const m = model('llama', {});
    const [full, last] = await bothWays(m, TOKENS, () => ({ offset: 0, prefixLength: 6 }));
    expectClose(last, full);
    m.dispose();
  });

  it("runs the last block's queries, output projection and feed-forward on the last position only", () => {
    const m = model('llama', {});
    const last = rowsSeen(m, m.layers.length - 1);
    const first = rowsSeen(m, 0);
    const ids = tensor(TOKENS, undefined, { dtype: 'i32' });
    m.hiddenLast(ids).dispose();
    expect(last).toEqual([1, 10, 1, 1]);
    expect(first).toEqual([10, 10, 10, 10]);
    ids.dispose();
    m.dispose();
  });

  it("forwardBatch: the last block's queries, output projection and feed-forward see each sequence's last row", () => {
    const m = model('llama', {});
    const last = rowsSeen(m, m.layers.length - 1);
    const first = rowsSeen(m, 0);
    const caches = [new TestCache(m.config), new TestCache(m.config)];
    const prompts = [TOKENS[0].slice(0, 5), TOKENS[1].slice(0, 3)];
    forwardBatch(
      m,
      prompts.map((tokens, i) => ({ tokens, offset: 0, cache: caches[i] })),
    ).dispose();
    expect(last).toEqual([8, 2, 2, 2]);
    expect(first).toEqual([8, 8, 8, 8]);
    for (const cache of caches) cache.dispose();
    m.dispose();
  });
});

/** Records, in call order, the rows each call of block `layer`'s wk, wq, wo and w1 gets. */
function rowsSeen(m: TransformerLM, layer: number): number[] {
  const seen: number[] = [];
  const { attention, feedForward } = m.layers[layer];
  if (!('w1' in feedForward)) throw new Error('rowsSeen: expected a dense feed-forward');
  for (const linear of [attention.wk, attention.wq, attention.wo, feedForward.w1]) {
    const forward = linear.forward.bind(linear);
    linear.forward = (x: Tensor) => {
      seen.push(x.shape[1]);
      return forward(x);
    };
  }
  return seen;
}
