import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { setBackend, tensor } from '@loom/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeConfig, SGD, TransformerLM } from '../src/index';

beforeAll(() => setBackend(new AutodiffBackend(new CpuBackend({ precision: 'f64' }))));

const EPS = 1e-5;
const config = makeConfig('llama', {
  vocabSize: 5,
  dim: 4,
  numLayers: 1,
  numHeads: 1,
  hiddenDim: 6,
  maxSeqLen: 4,
  normEps: EPS,
});
/** Two sequences of one token each: attention over one key passes its value through unchanged. */
const TOKENS = [3, 1];
const TARGETS = [2, 4];

type Weights = ReadonlyMap<string, Float64Array>;

/** out[i] = Σ_j w[i, j] x[j] for a row-major [out, in] weight. */
function matVec(w: Float64Array, x: readonly number[]): number[] {
  const cols = x.length;
  return Array.from({ length: w.length / cols }, (_, i) =>
    x.reduce((s, xj, j) => s + w[i * cols + j] * xj, 0),
  );
}

function rmsNorm(u: readonly number[], weight: Float64Array): number[] {
  const scale = 1 / Math.sqrt(u.reduce((s, v) => s + v * v, 0) / u.length + EPS);
  return u.map((v, i) => v * scale * weight[i]);
}

const silu = (v: number): number => v / (1 + Math.exp(-v));
const plus = (a: readonly number[], b: readonly number[]): number[] => a.map((v, i) => v + b[i]);

/**
 * The post-norm model's logits for one token, written out by hand: h = norm(x + attn(x)),
 * y = norm(h + ffn(h)), then the final norm and the output projection.
 */
function handLogits(w: Weights, token: number): number[] {
  const get = (name: string): Float64Array => {
    const values = w.get(name);
    if (!values) throw new Error(`no parameter ${name}`);
    return values;
  };
  const dim = config.dim;
  const x = Array.from(get('tok_embeddings.weight').subarray(token * dim, (token + 1) * dim));
  const attn = matVec(get('layers.0.attention.wo.weight'), matVec(get('layers.0.attention.wv.weight'), x));
  const h = rmsNorm(plus(x, attn), get('layers.0.attention_norm.weight'));
  const gate = matVec(get('layers.0.feed_forward.w1.weight'), h);
  const up = matVec(get('layers.0.feed_forward.w3.weight'), h);
  const ffn = matVec(
    get('layers.0.feed_forward.w2.weight'),
    gate.map((g, i) => silu(g) * up[i]),
  );
  const y = rmsNorm(plus(h, ffn), get('layers.0.ffn_norm.weight'));
  return matVec(get('output.weight'), rmsNorm(y, get('norm.weight')));
}

/** Mean cross-entropy of the hand-computed logits over TOKENS → TARGETS. */
function handLoss(w: Weights): number {
  let total = 0;
  TOKENS.forEach((token, i) => {
    const logits = handLogits(w, token);
    const top = Math.max(...logits);
    const logSum = top + Math.log(logits.reduce((s, v) => s + Math.exp(v - top), 0));
    total += logSum - logits[TARGETS[i]];
  });
  return total / TOKENS.length;
}

async function weightsOf(model: TransformerLM): Promise<Map<string, Float64Array>> {
  const weights = new Map<string, Float64Array>();
  for (const [name, p] of model.namedParameters()) weights.set(name, Float64Array.from(await p.data()));
  return weights;
}

describe('post-norm decoder blocks', () => {
  it('train with SGD and match the logits and gradients computed by hand', async () => {
    const model = new TransformerLM(config, { norm: 'post', seed: 3 });
    const tokens = tensor(TOKENS, [2, 1], { dtype: 'i32' });
    const targets = tensor(TARGETS, [2, 1], { dtype: 'i32' });
    const names = model.namedParameters().map(([name]) => name);
    const params = model.parameters();
    const opt = new SGD();
    const losses: number[] = [];
    for (let step = 0; step < 4; step++) {
      const weights = await weightsOf(model);
      const { value, grads } = valueAndGrad(() => model.loss(tokens, targets), params);
      const loss = await value.item();
      losses.push(loss);
      expect(loss).toBeCloseTo(handLoss(weights), 10);
      // Every gradient entry against central differences of the hand-written loss.
      for (const [index, grad] of grads.entries()) {
        const values = await grad.data();
        const own = weights.get(names[index]);
        if (!own) throw new Error(`no weights for ${names[index]}`);
        for (let j = 0; j < own.length; j++) {
          const saved = own[j];
          own[j] = saved + 1e-6;
          const up = handLoss(weights);
          own[j] = saved - 1e-6;
          const down = handLoss(weights);
          own[j] = saved;
          expect(values[j], `${names[index]}[${j}] at step ${step}`).toBeCloseTo((up - down) / 2e-6, 6);
        }
      }
      opt.step(params, grads, 0.5);
      for (const t of [value, ...grads]) t.dispose();
    }
    expect(losses[3]).toBeLessThan(losses[0]);
    // After training the norm weights are no longer all ones, so swapped norms would show here.
    const weights = await weightsOf(model);
    const out = model.forward(tokens); // [2, 1, vocab]
    const logits = await out.data();
    TOKENS.forEach((token, i) => {
      handLogits(weights, token).forEach((v, k) => {
        expect(logits[i * config.vocabSize + k]).toBeCloseTo(v, 10);
      });
    });
    expect(weights.get('layers.0.ffn_norm.weight')?.some((v) => Math.abs(v - 1) > 1e-3)).toBe(true);
    for (const t of [out, tokens, targets]) t.dispose();
    opt.dispose();
    model.dispose();
  });

  it('differ from pre-norm blocks with the same weights', async () => {
    const post = new TransformerLM(config, { norm: 'post', seed: 3 });
    const pre = new TransformerLM(config, { norm: 'pre', seed: 3 });
    const tokens = tensor(TOKENS, [2, 1], { dtype: 'i32' });
    const [a, b] = [post.forward(tokens), pre.forward(tokens)];
    const [av, bv] = [await a.data(), await b.data()];
    expect(av.some((v, i) => Math.abs(v - bv[i]) > 1e-3)).toBe(true);
    for (const t of [post, pre, tokens, a, b]) t.dispose();
  });
});
