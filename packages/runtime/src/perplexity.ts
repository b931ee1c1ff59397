import type { TransformerLM } from '@loom/nn';
import { tensor } from '@loom/tensor';

/** How `perplexity` windows a sequence. */
export interface PerplexityOptions {
  /** Tokens per window (default and maximum: the model's maxSeqLen). */
  readonly context?: number;
  /**
   * How far each window starts after the previous one (default: half the context). Every token after the first is
   * scored once, by the window that first reaches it, so with a stride below the context each scored token has at
   * least `context − stride` tokens before it (the first window's excepted); a window starts at the latest one
   * token before the first it scores (so a stride equal to the context overlaps windows by that one token).
   */
  readonly stride?: number;
  /** Called after each window with the tokens scored so far. */
  readonly onWindow?: (scored: number, total: number) => void;
}

/** A perplexity and what it was computed over. */
export interface PerplexityResult {
  /** exp(mean negative log-likelihood). */
  readonly perplexity: number;
  /** Mean negative log-likelihood, in nats per token. */
  readonly meanNll: number;
  /** Tokens scored: every token but the first. */
  readonly scored: number;
  readonly windows: number;
  readonly context: number;
  readonly stride: number;
}

/** −log softmax(row)[target], in float64. */
function negativeLogLikelihood(row: ArrayLike<number>, start: number, vocab: number, target: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < vocab; v++) max = Math.max(max, row[start + v]);
  let sum = 0;
  for (let v = 0; v < vocab; v++) sum += Math.exp(row[start + v] - max);
  return Math.log(sum) + max - row[start + target];
}

/**
 * The perplexity of a model on a token sequence, by sliding windows (as Hugging Face's guide computes it):
 * window k covers tokens [k·stride, k·stride + context) and scores those of its tokens not scored before, each
 * predicted from the tokens before it in the window. Log-probabilities are summed in float64.
 */
export async function perplexity(
  model: TransformerLM,
  tokens: readonly number[],
  options: PerplexityOptions = {},
): Promise<PerplexityResult> {
  const { maxSeqLen, vocabSize } = model.config;
  const context = options.context ?? maxSeqLen;
  if (!Number.isInteger(context) || context < 2 || context > maxSeqLen) {
    throw new Error(
      `perplexity: context must be an integer in [2, ${maxSeqLen}] (the model's maxSeqLen), got ${context}`,
    );
  }
  const stride = options.stride ?? Math.max(1, Math.floor(context / 2));
  if (!Number.isInteger(stride) || stride < 1 || stride > context) {
    throw new Error(`perplexity: stride must be an integer in [1, ${context}] (the context), got ${stride}`);
  }
  if (tokens.length < 2) {
    throw new Error(
      `perplexity: needs at least 2 tokens to score one, got ${tokens.length}; give a longer text`,
    );
  }
  const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
  if (bad >= 0) {
    throw new Error(
      `perplexity: token ${bad} is ${tokens[bad]}; ids must be integers in [0, ${vocabSize}) (the model's vocabulary)`,
    );
  }
  let total = 0;
  let scored = 0;
  let windows = 0;
  let scoredUpTo = 1; // token 0 has nothing before it
  let begin = 0;
  while (scoredUpTo < tokens.length) {
    const end = Math.min(begin + context, tokens.length);
    const ids = tensor(Int32Array.from(tokens.slice(begin, end)), [1, end - begin], {
      backend: model.backend,
    }); // [1, T]
    const logits = model.forward(ids); // [1, T, vocab]
    ids.dispose();
    const values = await logits.data();
    logits.dispose();
    // The logits at window position p predict token begin + p + 1.
    for (let target = scoredUpTo; target < end; target++) {
      total += negativeLogLikelihood(values, (target - 1 - begin) * vocabSize, vocabSize, tokens[target]);
    }
    scored += end - scoredUpTo;
    scoredUpTo = end;
    windows++;
    options.onWindow?.(scored, tokens.length - 1);
    // The next window must hold the token before the first it scores.
    begin = Math.min(begin + stride, scoredUpTo - 1);
  }
  const meanNll = total / scored;
  return { perplexity: Math.exp(meanNll), meanNll, scored, windows, context, stride };
}
