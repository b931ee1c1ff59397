import { type TransformerConfig, TransformerLM } from '@loom/nn';
import { InferenceSession, TokenChooser } from '@loom/runtime';
import { type Backend, tensor } from '@loom/tensor';
import { stories15MShape, stories260KShape } from '../model-shapes';

/**
 * The shapes of the benchmark's generated models (llama2.c's stories260K and stories15M), for runs
 * where the real weights are absent or not needed: decode speed depends on the shape, not the values.
 */
export const BENCH_SHAPES: Readonly<Record<'stories260K' | 'stories15M', TransformerConfig>> = {
  stories260K: stories260KShape(),
  stories15M: stories15MShape(),
};

/** A generated model of one of the benchmark's shapes, in evaluation mode. */
export function shapedModel(name: keyof typeof BENCH_SHAPES): TransformerLM {
  return new TransformerLM(BENCH_SHAPES[name]).eval();
}

/** The greedy tokens of a decode and its speed. */
export interface DecodeRate {
  readonly tokensPerS: number;
  readonly tokens: readonly number[];
}

/**
 * Decodes `warmUp` untimed greedy tokens, then `steps` timed ones in a fresh session, each step feeding one
 * token and reading only the cache (the argmax on the device, as `pnpm bench generate` does).
 */
export async function decodeRate(model: TransformerLM, steps: number, warmUp: number): Promise<DecodeRate> {
  if (Math.max(steps, warmUp) > model.config.maxSeqLen) {
    throw new Error(
      `decode: ${Math.max(steps, warmUp)} steps do not fit the model's ${model.config.maxSeqLen} positions; ask for fewer`,
    );
  }
  const chooser = new TokenChooser({ temperature: 0 });
  await greedy(model, chooser, warmUp);
  const start = performance.now();
  const tokens = await greedy(model, chooser, steps);
  return { tokensPerS: (steps * 1000) / (performance.now() - start), tokens };
}

async function greedy(model: TransformerLM, chooser: TokenChooser, steps: number): Promise<number[]> {
  const session = new InferenceSession(model);
  const tokens: number[] = [];
  let token = 1;
  try {
    for (let step = 0; step < steps; step++) {
      const logits = session.feed([token]);
      token = (await chooser.choose(logits)).token;
      logits.dispose();
      tokens.push(token);
    }
  } finally {
    session.dispose();
  }
  return tokens;
}

/** Rows, inner size and columns of the seeded product of `computeCheck`: large enough to be split across threads. */
const PRODUCT = { m: 96, k: 288, n: 768 } as const;

/** Deterministic values in [-1, 1) (a linear congruential generator), so both thread counts multiply the same matrices. */
export function seededValues(count: number, seed: number): Float32Array {
  const values = new Float32Array(count);
  let state = seed >>> 0;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[i] = state / 2 ** 31 - 1;
  }
  return values;
}

/** The seeded product's operands: A [m, k] and B [k, n], row-major. */
export function productOperands(): { readonly a: Float32Array; readonly b: Float32Array } & typeof PRODUCT {
  return { ...PRODUCT, a: seededValues(PRODUCT.m * PRODUCT.k, 1), b: seededValues(PRODUCT.k * PRODUCT.n, 2) };
}

/** What a computation gave, as float32 bit patterns where it is numbers: to compare bit for bit. */
export interface ComputeResult {
  readonly product: readonly number[];
  readonly tokens: readonly number[];
  readonly logits: readonly number[];
}

const bits = (values: Float32Array) =>
  Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length));

/** The seeded product on `backend`, and `steps` greedy tokens of `model` with the logits of the last step. */
export async function computeCheck(
  backend: Backend,
  model: TransformerLM,
  steps: number,
): Promise<ComputeResult> {
  const { m, k, n, a, b } = productOperands();
  const left = tensor(a, [m, k], { backend }); // [m, k]
  const right = tensor(b, [k, n], { backend }); // [k, n]
  const out = left.matmul(right); // [m, n]
  const product = bits((await out.data()) as Float32Array);
  for (const t of [left, right, out]) t.dispose();
  const chooser = new TokenChooser({ temperature: 0 });
  const session = new InferenceSession(model);
  const tokens: number[] = [];
  let logits: readonly number[] = [];
  let token = 1;
  try {
    for (let step = 0; step < steps; step++) {
      const out = session.feed([token]); // [vocab]
      if (step === steps - 1) logits = bits((await out.data()) as Float32Array);
      token = (await chooser.choose(out)).token;
      out.dispose();
      tokens.push(token);
    }
  } finally {
    session.dispose();
  }
  return { product, tokens, logits };
}
