import { AutodiffBackend, gradcheck, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { assign, randn, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import {
  activeParameterCount,
  configProblems,
  expertCapacity,
  loadBalancingLoss,
  type MoeConfig,
  MoeFeedForward,
  makeConfig,
  parameterCount,
  SeedSequence,
  TransformerLM,
} from '../src/index';

const backend = new AutodiffBackend(new CpuBackend({ precision: 'f64' }));
setBackend(backend);

function tinyMoe(moe: MoeConfig, dim = 6, hiddenDim = 10): MoeFeedForward {
  const config = makeConfig('llama', {
    vocabSize: 7,
    dim,
    hiddenDim,
    numLayers: 1,
    numHeads: 1,
    maxSeqLen: 8,
  });
  const seq = new SeedSequence(5);
  return new MoeFeedForward(config, moe, { std: 0.5, residualStd: 0.5, seeds: () => seq.next(), dropout: 0 });
}

/**
 * Independent reference in plain JavaScript: every expert's output on every token (computed densely), top-k of the
 * router logits, a softmax over the k chosen, and capacity filled in token order.
 */
async function denseReference(moe: MoeFeedForward, x: Tensor, capacity: number): Promise<Float64Array> {
  const [n, dim] = x.shape;
  const logits = Array.from(await moe.router.gate.forward(x).data());
  const outputs = await Promise.all(moe.experts.map((expert) => expert.forward(x).data()));
  const e = moe.moe.experts;
  const used = new Array<number>(e).fill(0);
  const out = new Float64Array(n * dim);
  for (let i = 0; i < n; i++) {
    const row = logits.slice(i * e, (i + 1) * e);
    const order = row.map((_, j) => j).sort((a, b) => row[b] - row[a] || a - b);
    const chosen = order.slice(0, moe.moe.topK);
    const top = Math.max(...chosen.map((j) => row[j]));
    const weights = chosen.map((j) => Math.exp(row[j] - top));
    const total = weights.reduce((a, b) => a + b, 0);
    chosen.forEach((j, c) => {
      if (used[j]++ >= capacity) return;
      for (let d = 0; d < dim; d++) out[i * dim + d] += (weights[c] / total) * outputs[j][i * dim + d];
    });
  }
  return out;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

describe('mixture of experts', () => {
  it('dispatch equals the dense reference without drops, and reports the load', async () => {
    const moe = tinyMoe({ experts: 4, topK: 2, capacityFactor: 2 });
    const x = randn([11, 6], { seed: 3, backend });
    expect(expertCapacity(moe.moe, 11)).toBe(11);
    const { output, load, dropped, auxLoss } = moe.route(x);
    expect(maxDiff(await output.data(), await denseReference(moe, x, 11))).toBeLessThan(1e-5);
    const counts = Array.from(await load.data());
    expect(counts.reduce((a, b) => a + b, 0)).toBe(22);
    expect(await dropped.item()).toBe(0);
    expect(await auxLoss.item()).toBeGreaterThan(0);
    for (const t of [x, output, load, dropped, auxLoss]) t.dispose();
    moe.dispose();
  });

  it('drops assignments past capacity in token order, as the reference does', async () => {
    const moe = tinyMoe({ experts: 3, topK: 1, capacityFactor: 0.5 });
    const x = randn([2, 9, 6], { seed: 8, backend }); // any leading shape
    const capacity = expertCapacity(moe.moe, 18);
    expect(capacity).toBe(3);
    const { output, load, dropped } = moe.route(x);
    expect(output.shape).toEqual([2, 9, 6]);
    const counts = Array.from(await load.data());
    const expectedDrops = counts.reduce((sum, c) => sum + Math.max(0, c - capacity), 0);
    expect(expectedDrops).toBeGreaterThan(0);
    expect(await dropped.item()).toBe(expectedDrops);
    const reference = await denseReference(moe, x.reshape([18, 6]), capacity);
    expect(maxDiff(await output.data(), reference)).toBeLessThan(1e-5);
    for (const t of [x, output, load, dropped]) t.dispose();
    moe.dispose();
  });

  it('gradients through the input (gather, gates, scatter-add) match finite differences in float64', async () => {
    const moe = tinyMoe({ experts: 3, topK: 2, capacityFactor: 0.7 }, 4, 5);
    const x = randn([7, 4], { seed: 21, backend });
    const weights = randn([7, 4], { seed: 22, backend });
    const result = await gradcheck(
      ([input]) => {
        const { output, auxLoss } = moe.route(input);
        return output.mul(weights).sum().add(auxLoss.mul(0.3));
      },
      [x],
      { eps: 1e-6, atol: 1e-7, rtol: 1e-6 },
    );
    expect(result.ok, result.message).toBe(true);
    expect(result.checked).toBe(28);
    for (const t of [x, weights]) t.dispose();
    moe.dispose();
  });

  it('gradients of the router and every expert weight match finite differences in float64', async () => {
    const moe = tinyMoe({ experts: 3, topK: 2 }, 4, 5);
    const x = randn([6, 4], { seed: 31, backend });
    const weights = randn([6, 4], { seed: 32, backend });
    const loss = () =>
      scope(() => {
        const { output, auxLoss } = moe.route(x);
        return output.mul(weights).sum().add(auxLoss.mul(0.3));
      });
    const params = moe.namedParameters();
    expect(params.map(([name]) => name)).toContain('gate.weight');
    expect(params.map(([name]) => name)).toContain('experts.2.w3.weight');
    const { value, grads } = valueAndGrad(
      loss,
      params.map(([, p]) => p),
    );
    value.dispose();
    const eps = 1e-6;
    for (const [k, [name, param]] of params.entries()) {
      const analytic = await grads[k].data();
      const base = Float64Array.from(await param.data());
      for (const j of [0, base.length - 1, Math.floor(base.length / 2)]) {
        const at = async (delta: number) => {
          const moved = base.slice();
          moved[j] += delta;
          const t = tensor(moved, param.shape, { backend });
          assign(param, t);
          t.dispose();
          const out = loss();
          const v = await out.item();
          out.dispose();
          return v;
        };
        const numeric = ((await at(eps)) - (await at(-eps))) / (2 * eps);
        await at(0);
        expect(Math.abs(numeric - analytic[j]), `${name}[${j}]`).toBeLessThan(
          1e-6 + 1e-5 * Math.abs(numeric),
        );
      }
      grads[k].dispose();
    }
    for (const t of [x, weights]) t.dispose();
    moe.dispose();
  });

  it('the load-balancing loss is 1 when load and probabilities are uniform, more when concentrated', async () => {
    const uniform = tensor(new Array(8).fill(0.25), [2, 4]);
    const even = tensor([1, 1, 1, 1]);
    expect(await loadBalancingLoss(uniform, even, 2).item()).toBeCloseTo(1, 10);
    const peaked = tensor([0.7, 0.1, 0.1, 0.1, 0.7, 0.1, 0.1, 0.1], [2, 4]);
    const skewed = tensor([2, 1, 1, 0]);
    expect(await loadBalancingLoss(peaked, skewed, 2).item()).toBeCloseTo(
      4 * (0.5 * 0.7 + 0.25 * 0.1 * 2),
      10,
    );
    for (const t of [uniform, even, peaked, skewed]) t.dispose();
  });
});

describe('a MoE TransformerLM', () => {
  const moe = { experts: 4, topK: 2, auxLossCoef: 0.05 };
  const config = makeConfig('llama', { vocabSize: 11, dim: 8, numLayers: 2, numHeads: 2, maxSeqLen: 8, moe });

  it('counts total and active parameters', () => {
    const model = new TransformerLM(config, { seed: 3 });
    const actual = model.parameters().reduce((sum, p) => sum + p.size, 0);
    expect(parameterCount(config)).toBe(actual);
    const perExpert = 3 * config.dim * config.hiddenDim;
    expect(parameterCount(config) - activeParameterCount(config)).toBe(2 * 2 * perExpert);
    const dense = makeConfig('llama', { vocabSize: 11, dim: 8, numLayers: 2, numHeads: 2, maxSeqLen: 8 });
    expect(activeParameterCount(dense)).toBe(parameterCount(dense));
    expect(activeParameterCount(config)).toBe(parameterCount(dense) + 2 * (perExpert + 4 * config.dim));
    model.dispose();
  });

  it('adds the weighted load-balancing loss to the training loss, and trains the router', async () => {
    const model = new TransformerLM(config, { seed: 3 });
    const noAux = new TransformerLM({ ...config, moe: { ...moe, auxLossCoef: 0 } }, { seed: 3 });
    const tokens = tensor(Int32Array.from([1, 5, 2, 7, 3, 9, 4, 10]), [2, 4], { dtype: 'i32' });
    const targets = tensor(Int32Array.from([5, 2, 7, 3, 9, 4, 10, 0]), [2, 4], { dtype: 'i32' });
    const stats: { auxLoss: Tensor; load: Tensor; dropped: Tensor }[] = [];
    model.hidden(tokens, { offset: 0 }, stats).dispose();
    expect(stats).toHaveLength(2);
    let aux = 0;
    for (const s of stats) {
      aux += await s.auxLoss.item();
      expect(Array.from(await s.load.data()).reduce((a, b) => a + b, 0)).toBe(16);
      for (const t of [s.auxLoss, s.load, s.dropped]) t.dispose();
    }
    const withAux = model.loss(tokens, targets);
    const without = noAux.loss(tokens, targets);
    expect((await withAux.item()) - (await without.item())).toBeCloseTo(0.05 * (aux / 2), 8);
    const gate = model.namedParameters().find(([name]) => name === 'layers.0.feed_forward.gate.weight');
    expect(gate).toBeDefined();
    const { value, grads } = valueAndGrad(() => model.loss(tokens, targets), [gate?.[1] as Tensor]);
    expect(Array.from(await grads[0].data()).some((g) => g !== 0)).toBe(true);
    for (const t of [withAux, without, value, grads[0], tokens, targets]) t.dispose();
    model.dispose();
    noAux.dispose();
  });

  it('refuses a bad moe option, naming it', () => {
    const bad = { ...config, moe: { experts: 4, topK: 5 } };
    expect(configProblems(bad).join('; ')).toMatch(/moe\.topK must be an integer in \[1, experts=4\], got 5/);
    expect(configProblems({ ...config, moe: { experts: 0, topK: 1 } }).join(';')).toMatch(/moe\.experts/);
    expect(configProblems({ ...config, moe: { experts: 2, topK: 1, capacityFactor: -1 } })[0]).toMatch(
      /capacityFactor/,
    );
    expect(() =>
      makeConfig('gpt2', { vocabSize: 5, dim: 4, numLayers: 1, numHeads: 1, maxSeqLen: 4, moe }),
    ).toThrow(/moe needs SwiGLU experts/);
  });
});
