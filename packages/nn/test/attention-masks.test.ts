import { AutodiffBackend, valueAndGrad } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { concat, keep, scope, setBackend, type Tensor, tensor } from '@loom/tensor';
import { describe, expect, it } from 'vitest';
import { type ForwardContext, makeConfig, type StoredKV, TransformerLM } from '../src/index';

setBackend(new AutodiffBackend(new CpuBackend()));

const config = makeConfig('llama', {
  vocabSize: 16,
  dim: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  maxSeqLen: 16,
});
const TOKENS = [1, 5, 9, 2, 7, 3, 11, 4];
const PREFIX = 4;

function ids(list: readonly number[]): Tensor {
  return tensor([list], undefined, { dtype: 'i32' });
}

/** Logits of `tokens` as one row of numbers per position. */
async function logits(
  model: TransformerLM,
  tokens: readonly number[],
  ctx?: ForwardContext,
): Promise<number[][]> {
  const out = scope(() => model.forward(ids(tokens), ctx));
  const data = await out.data();
  out.dispose();
  const v = config.vocabSize;
  return tokens.map((_, i) => Array.from(data.subarray(i * v, (i + 1) * v)));
}

/** Largest difference between the rows of a and b at each position. */
function differences(a: readonly number[][], b: readonly number[][]): number[] {
  return a.map((row, i) => Math.max(...row.map((x, j) => Math.abs(x - b[i][j]))));
}

/** TOKENS with the token at `position` replaced. */
function changed(position: number): number[] {
  return TOKENS.map((id, i) => (i === position ? (id + 6) % config.vocabSize : id));
}

describe('prefix LM (ForwardContext.prefixLength)', () => {
  const model = new TransformerLM(config, { seed: 3 }).eval();
  const prefix = { offset: 0, prefixLength: PREFIX };

  it('lets a prefix position see later prefix tokens, and nothing see past the prefix ahead of it', async () => {
    const base = await logits(model, TOKENS, prefix);
    // A later prefix token (position 2) moves every position, the ones before it included.
    const inPrefix = differences(await logits(model, changed(2), prefix), base);
    for (const d of inPrefix) expect(d).toBeGreaterThan(1e-4);
    // A token after the prefix (position 5) moves only itself and later positions: causal there.
    const after = differences(await logits(model, changed(5), prefix), base);
    for (const d of after.slice(0, 5)) expect(d).toBeLessThan(1e-6);
    for (const d of after.slice(5)) expect(d).toBeGreaterThan(1e-4);
    // Under the causal mask the same change at position 2 leaves positions 0 and 1 alone.
    const causal = differences(await logits(model, changed(2)), await logits(model, TOKENS));
    for (const d of causal.slice(0, 2)) expect(d).toBeLessThan(1e-6);
  });

  it('is the causal model with a prefix of 0 or 1, and differs inside a longer prefix only', async () => {
    const causal = await logits(model, TOKENS);
    for (const length of [0, 1]) {
      for (const d of differences(await logits(model, TOKENS, { offset: 0, prefixLength: length }), causal)) {
        expect(d).toBe(0);
      }
    }
    const d = differences(await logits(model, TOKENS, prefix), causal);
    for (const x of d.slice(0, PREFIX - 1)) expect(x).toBeGreaterThan(1e-4);
    // The last prefix position sees every prefix key under both masks, so its first layer is the same; deeper layers
    // read the earlier positions' changed states, so it still moves.
    expect(d[PREFIX - 1]).toBeGreaterThan(1e-6);
  });

  it('decodes after a prefilled prefix like one pass over everything', async () => {
    const full = await logits(model, TOKENS, prefix);
    const stored: { k: Tensor; v: Tensor }[] = [];
    const cache = {
      update(layer: number, k: Tensor, v: Tensor): StoredKV {
        const past = stored[layer];
        const next = past ? { k: concat([past.k, k], 1), v: concat([past.v, v], 1) } : { k, v };
        for (const t of [next.k, next.v]) keep(t);
        if (past) for (const t of [past.k, past.v]) t.dispose();
        stored[layer] = next;
        return { k: next.k.view(next.k.shape), v: next.v.view(next.v.shape) };
      },
    };
    const first = await logits(model, TOKENS.slice(0, PREFIX), { offset: 0, prefixLength: PREFIX, cache });
    expect(Math.max(...differences(first, full.slice(0, PREFIX)))).toBeLessThan(1e-5);
    for (let p = PREFIX; p < TOKENS.length; p++) {
      const step = await logits(model, [TOKENS[p]], { offset: p, prefixLength: PREFIX, cache });
      expect(Math.max(...differences(step, [full[p]]))).toBeLessThan(1e-5);
    }
    for (const { k, v } of stored) for (const t of [k, v]) t.dispose();
  });

  it('trains through the prefix mask: a prefix position gets gradient from later prefix tokens', () => {
    // d(logits at position 0)/d(embedding of the token at position 2): zero when causal, not with the prefix.
    const gradientNorm = (ctx: ForwardContext) => {
      const { value, grads } = valueAndGrad(
        () =>
          scope(() => {
            const first = model.forward(ids(TOKENS), ctx).slice([0, 0, 0], [1, 1, config.vocabSize]); // [1, 1, vocab]
            return first.mul(first).sum();
          }),
        [model.tokEmbeddings.weight],
      );
      const row = scope(() => {
        const g = grads[0].slice([TOKENS[2], 0], [1, config.dim]); // [1, dim]
        return g.mul(g).sum();
      });
      value.dispose();
      grads[0].dispose();
      return row;
    };
    return Promise.all([gradientNorm(prefix).item(), gradientNorm({ offset: 0 }).item()]).then(
      ([withPrefix, causal]) => {
        expect(withPrefix).toBeGreaterThan(1e-8);
        expect(causal).toBe(0);
      },
    );
  });

  it('refuses a prefix longer than the positions seen so far', () => {
    expect(() => model.forward(ids(TOKENS), { offset: 0, prefixLength: 9 })).toThrow(
      /prefixLength must be an integer in \[0, 8\]/,
    );
  });
});

describe('TransformerConfig.slidingWindow', () => {
  it('is validated', () => {
    for (const slidingWindow of [0, -2, 2.5]) {
      expect(() => makeConfig('llama', { ...config, slidingWindow })).toThrow(
        /slidingWindow must be a positive integer/,
      );
    }
    expect(makeConfig('llama', { ...config, slidingWindow: 3 }).slidingWindow).toBe(3);
  });

  it('limits each position to the last W tokens in training and prefill', async () => {
    const windowed = new TransformerLM({ ...config, slidingWindow: 3 }, { seed: 3 }).eval();
    const base = await logits(windowed, TOKENS);
    // Changing position 1 reaches positions 1..3 in the first layer and, through it, up to 5 in the second (2 layers).
    const d = differences(await logits(windowed, changed(1)), base);
    for (const x of d.slice(1, 6)) expect(x).toBeGreaterThan(1e-5);
    for (const x of d.slice(6)) expect(x).toBeLessThan(1e-6);
  });
});
