import { AutodiffBackend, gradcheck, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import {
  assign,
  type Backend,
  randn,
  scope,
  selectiveScan,
  setBackend,
  type Tensor,
  tensor,
} from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AdamW,
  causalConv,
  clipGradNorm,
  innerDim,
  MambaLM,
  MambaMixer,
  makeMambaConfig,
  mambaConfigProblems,
  mambaParameterCount,
  SeedSequence,
  scanFrom,
  warmupCosine,
} from '../src/index';

const small = makeMambaConfig({ vocabSize: 13, dim: 8, numLayers: 2, stateSize: 4 });

/** Largest |a - b| over two arrays of the same length. */
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** Seeded scan inputs x, Δ (positive), A (negative), B, C, D for [b, t, d] and state size n. */
function scanInputs(backend: Backend, b: number, t: number, d: number, n: number): Tensor[] {
  return scope(() => [
    randn([b, t, d], { seed: 1, backend }),
    randn([b, t, d], { seed: 2, backend }).abs().mul(0.3).add(0.01),
    randn([d, n], { seed: 3, backend }).abs().add(0.5).neg(),
    randn([b, t, n], { seed: 4, backend }),
    randn([b, t, n], { seed: 5, backend }),
    randn([d], { seed: 6, backend }),
  ]);
}

describe('Mamba', () => {
  beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend())));

  it('names parameters as Mamba does and counts them exactly', () => {
    for (const tiedEmbeddings of [true, false]) {
      const config = { ...small, tiedEmbeddings };
      const model = new MambaLM(config);
      const names = model.namedParameters().map(([n]) => n);
      for (const name of ['in_proj.weight', 'conv1d.weight', 'x_proj.weight', 'dt_proj.bias', 'A_log', 'D']) {
        expect(names).toContain(`layers.1.mixer.${name}`);
      }
      expect(names.includes('lm_head.weight')).toBe(!tiedEmbeddings);
      expect(mambaParameterCount(config)).toBe(model.parameters().reduce((n, p) => n + p.size, 0));
      model.dispose();
    }
  });

  it('initialises A = -[1..N], D = 1 and step sizes softplus(dt bias) in [0.001, 0.1]', async () => {
    const model = new MambaLM(small);
    const mixer = model.layers[0].mixer;
    const a = await mixer.aLog.exp().neg().data();
    expect(Array.from(a.slice(0, 4))).toEqual([-1, -2, -3, -4].map((v) => expect.closeTo(v, 5)));
    expect(new Set(await mixer.dSkip.data())).toEqual(new Set([1]));
    const bias = await mixer.dtProj.bias?.data();
    const steps = Array.from(bias ?? [], (v) => Math.log1p(Math.exp(v)));
    expect(steps.length).toBe(innerDim(small));
    for (const s of steps) expect(s).toBeGreaterThanOrEqual(0.001 - 1e-6);
    for (const s of steps) expect(s).toBeLessThanOrEqual(0.1 + 1e-6);
    model.dispose();
  });

  it('lists every problem of an invalid config', () => {
    const problems = mambaConfigProblems({ ...small, dim: 0, stateSize: 1.5, normEps: -1 });
    expect(problems.join('; ')).toMatch(/dim must be a positive integer, got 0/);
    expect(problems.join('; ')).toMatch(/stateSize must be a positive integer, got 1.5/);
    expect(problems.join('; ')).toMatch(/normEps/);
    expect(() => makeMambaConfig({ vocabSize: 5, dim: 8, numLayers: 0 })).toThrow(
      /numLayers must be a positive/,
    );
  });

  it('refuses mismatched convolution and state inputs with errors naming them', () => {
    const x = randn([1, 5, 3], { seed: 1 });
    const weight = randn([4, 4], { seed: 2 });
    const bias = randn([3], { seed: 3 });
    expect(() => causalConv(x, weight, bias)).toThrow(/causalConv: expected .* weight \[4, 4\]/);
    const model = new MambaLM(small);
    const state = model.newState(2);
    expect(() => scope(() => model.prefill(tensor([[1, 2]], undefined, { dtype: 'i32' }), state))).toThrow(
      /model.newState\(1\)/,
    );
    for (const t of [x, weight, bias, state, model]) t.dispose();
  });

  it('scanning from a state, token by token or in pieces, equals the full scan within 1e-4', async () => {
    const backend = new CpuBackend();
    const [b, t, d, n] = [2, 9, 5, 3];
    const [x, delta, a, bm, c, dSkip] = scanInputs(backend, b, t, d, n);
    const full = await selectiveScan(x, delta, a, bm, c, dSkip).data();
    for (const pieces of [[1, 1, 1, 1, 1, 1, 1, 1, 1], [4, 1, 4], [9]]) {
      let h = tensor(new Float32Array(b * d * n), [b, d, n], { backend });
      const ys: Float32Array[] = Array.from({ length: b }, () => new Float32Array(t * d));
      let at = 0;
      for (const len of pieces) {
        const part = (v: Tensor) => v.slice([0, at, 0], [b, len, v.shape[2]]);
        const out = scanFrom(part(x), part(delta), a, part(bm), part(c), dSkip, h);
        const y = await out.y.data();
        for (let bi = 0; bi < b; bi++) ys[bi].set(y.subarray(bi * len * d, (bi + 1) * len * d), at * d);
        h.dispose();
        h = out.h;
        out.y.dispose();
        at += len;
      }
      const stitched = new Float32Array(b * t * d);
      for (let bi = 0; bi < b; bi++) stitched.set(ys[bi], bi * t * d);
      expect(maxDiff(stitched, full), `pieces ${pieces.join('+')}`).toBeLessThan(1e-4);
      h.dispose();
    }
  });

  it('generates token by token with the logits of a full forward, in a state that does not grow', async () => {
    const model = new MambaLM(small, { seed: 3 }).eval();
    // Weights at a larger scale than Mamba's initialisation, so the state carries much of the output.
    for (const [i, p] of model.parameters().entries()) {
      scope(() => assign(p, randn(p.shape, { seed: 100 + i }).mul(0.5)));
    }
    const before = model.backend.liveCount();
    const ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8];
    const forward = scope(() => model.forward(tensor(ids, [1, ids.length], { dtype: 'i32' }))); // [1, T, V]
    const all = await forward.data();
    forward.dispose();
    const state = model.newState();
    const bytes = state.bytes;
    const v = small.vocabSize;
    const prompt = 5;
    const first = scope(() =>
      model.prefill(tensor(ids.slice(0, prompt), [1, prompt], { dtype: 'i32' }), state),
    );
    expect(maxDiff(await first.data(), all.subarray((prompt - 1) * v, prompt * v))).toBeLessThan(1e-4);
    first.dispose();
    const live = model.backend.liveCount();
    for (let i = prompt; i < ids.length; i++) {
      const logits = scope(() => model.step(tensor([ids[i]], [1, 1], { dtype: 'i32' }), state));
      expect(maxDiff(await logits.data(), all.subarray(i * v, (i + 1) * v)), `token ${i}`).toBeLessThan(1e-4);
      logits.dispose();
      expect(state.bytes).toBe(bytes);
    }
    expect(state.tokens).toBe(ids.length);
    expect(model.backend.liveCount(), 'live tensors after the decode steps').toBe(live);
    expect(bytes).toBe(4 * small.numLayers * innerDim(small) * (small.convWidth - 1 + small.stateSize));
    expect(() => scope(() => model.step(tensor([1, 2], [1, 2], { dtype: 'i32' }), state))).toThrow(
      /one token per sequence/,
    );
    state.dispose();
    expect(model.backend.liveCount(), 'live tensors after disposing the state').toBe(before);
    model.dispose();
  });

  it('trains: the loss of a tiny Mamba on a small text falls clearly in 40 steps', async () => {
    const text = 'the cat sat on the mat. the dog sat on the log. a cat and a dog sat on a mat. ';
    const chars = [...new Set(text)].sort();
    const ids = [...text].map((ch) => chars.indexOf(ch));
    const config = makeMambaConfig({ vocabSize: chars.length, dim: 32, numLayers: 2, stateSize: 8 });
    const model = new MambaLM(config, { seed: 7 });
    const block = 24;
    const starts = [0, 9, 19, 31, 40, 50];
    const rows = (offset: number) => starts.flatMap((s) => ids.slice(s + offset, s + offset + block));
    const tokens = tensor(rows(0), [starts.length, block], { dtype: 'i32' });
    const targets = tensor(rows(1), [starts.length, block], { dtype: 'i32' });
    const params = model.parameters();
    const opt = new AdamW({ weightDecay: 0.01 });
    const lr = warmupCosine({ maxLr: 1e-2, minLr: 1e-3, warmup: 4, decaySteps: 40 });
    const losses: number[] = [];
    const live: number[] = [];
    for (let step = 0; step < 40; step++) {
      const { value, grads } = valueAndGrad(() => model.loss(tokens, targets), params);
      losses.push(await value.item());
      const clipped = clipGradNorm(grads, 1);
      opt.step(params, clipped.grads, lr(step));
      for (const t of [value, clipped.norm, ...grads, ...clipped.grads]) t.dispose();
      live.push(model.backend.liveCount());
    }
    expect(new Set(live.slice(1)).size, 'live tensors stay constant across steps').toBe(1);
    expect(losses[0]).toBeGreaterThan(Math.log(chars.length) - 0.5);
    expect(losses[losses.length - 1], `losses ${losses.map((l) => l.toFixed(2)).join(' ')}`).toBeLessThan(
      0.25 * losses[0],
    );
    opt.dispose();
    model.dispose();
  });
});

describe('Mamba gradients in float64', () => {
  const backend = new AutodiffBackend(new CpuBackend({ precision: 'f64' }));
  const options = { eps: 1e-6, atol: 1e-7, rtol: 1e-6 };
  /** A scalar of y with unequal weights per element, so every output element counts differently. */
  const project = (y: Tensor) => y.mul(randn(y.shape, { seed: 11, backend: y.backend })).sum();

  it('selectiveScan: every input, with A negative, over several steps', async () => {
    const inputs = scanInputs(backend, 2, 5, 3, 2);
    const result = await gradcheck(
      ([x, dt, a, b, c, d]) => project(selectiveScan(x, dt, a, b, c, d)),
      inputs,
      options,
    );
    expect(result.ok, result.message).toBe(true);
    expect(result.checked).toBe(30 + 30 + 6 + 20 + 20 + 3);
    for (const t of inputs) t.dispose();
  });

  it('causalConv: input, weight and bias', async () => {
    const inputs = scope(() => [
      randn([2, 5, 3], { seed: 1, backend }),
      randn([3, 4], { seed: 2, backend }),
      randn([3], { seed: 3, backend }),
    ]);
    const result = await gradcheck(([x, w, b]) => project(causalConv(x, w, b).y), inputs, options);
    expect(result.ok, result.message).toBe(true);
    for (const t of inputs) t.dispose();
  });

  it('the mixer, through its input (softplus, gate, projections)', async () => {
    setBackend(backend);
    const config = makeMambaConfig({ vocabSize: 5, dim: 4, numLayers: 1, stateSize: 3 });
    const mixer = new MambaMixer(config, new SeedSequence(9));
    const u = randn([1, 4, 4], { seed: 4, backend });
    const result = await gradcheck(([x]) => project(mixer.forward(x)), [u], options);
    expect(result.ok, result.message).toBe(true);
    u.dispose();
    mixer.dispose();
  });
});
