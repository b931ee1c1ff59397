import type { TransformerLM } from '@loom/nn';
import { scope, tensor } from '@loom/tensor';
import { CounterRng } from './random';

export interface SampleOptions {
  /** Tokens to generate after the prompt. */
  readonly maxTokens: number;
  /** 0: greedy (argmax); otherwise softmax(logits / temperature) sampling. */
  readonly temperature: number;
  /** Seed of the sampling draws. */
  readonly seed: number;
  /** Told each new token as it is chosen. */
  readonly onToken?: (id: number) => void;
}

/** Index of the largest value (the first on ties). */
export function argmaxOf(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** A draw from softmax(logits / temperature) given a uniform `u` in (0, 1). */
export function sampleFrom(logits: ArrayLike<number>, temperature: number, u: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  const weights = Array.from(logits, (l) => Math.exp((l - max) / temperature));
  let threshold = u * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    threshold -= weights[i];
    if (threshold <= 0) return i;
  }
  return argmaxOf(logits);
}

/**
 * Continues `prompt` (token ids, at least one) by `maxTokens` tokens with a simple
 * full-context loop: each token runs the model over the last `maxSeqLen` tokens and reads
 * back the last position's scores. Returns the new tokens.
 */
export async function generate(
  model: TransformerLM,
  prompt: readonly number[],
  options: SampleOptions,
): Promise<number[]> {
  if (prompt.length === 0) throw new Error('generate: the prompt must hold at least one token');
  const wasTraining = model.training;
  model.eval();
  const rng = new CounterRng(options.seed);
  const context = [...prompt];
  const out: number[] = [];
  try {
    for (let i = 0; i < options.maxTokens; i++) {
      const window = context.slice(-model.config.maxSeqLen);
      const logits = scope(() => {
        const tokens = tensor(window, [1, window.length], { dtype: 'i32' });
        return model.project(model.hiddenLast(tokens)); // [1, 1, dim] -> [1, 1, vocab]
      });
      const scores = await logits.data();
      logits.dispose();
      const id =
        options.temperature === 0 ? argmaxOf(scores) : sampleFrom(scores, options.temperature, rng.next());
      context.push(id);
      out.push(id);
      options.onToken?.(id);
    }
  } finally {
    model.train(wasTraining);
  }
  return out;
}
