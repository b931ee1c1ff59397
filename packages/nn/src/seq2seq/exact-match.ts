import type { KVStore } from '../kv-store';
import { greedyDecode } from './greedy';
import type { Hypothesis } from './hypothesis';
import type { EncoderDecoder } from './model';
import type { Seq2SeqTokens } from './teacher-forcing';
import type { Seq2SeqPair } from './toy-task';

/** How `exactMatch` decodes. */
export interface ExactMatchOptions {
  readonly special: Seq2SeqTokens;
  /** Sources decoded together (default 64). */
  readonly batchSize?: number;
  /** A self-attention KV cache for `batch` rows, disposed after its batch; without it no self cache is used. */
  readonly newSelfCache?: (batch: number) => KVStore & { dispose(): void };
}

/** The result of `exactMatch`. */
export interface ExactMatchResult {
  /** Pairs whose greedy output equals the target and ends with EOS. */
  readonly correct: number;
  readonly total: number;
  /** The greedy output of each pair, in order. */
  readonly outputs: readonly Hypothesis[];
}

/**
 * Greedy-decodes every pair's source (at most target length + 1 tokens, the EOS included) and counts the outputs
 * that equal the target exactly.
 */
export async function exactMatch(
  model: EncoderDecoder,
  pairs: readonly Seq2SeqPair[],
  options: ExactMatchOptions,
): Promise<ExactMatchResult> {
  const batchSize = options.batchSize ?? 64;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new Error(`exactMatch: batchSize must be a positive integer, got ${batchSize}`);
  }
  const outputs: Hypothesis[] = [];
  for (let start = 0; start < pairs.length; start += batchSize) {
    const batch = pairs.slice(start, start + batchSize);
    const longest = Math.max(...batch.map((p) => p.target.length));
    const maxLength = Math.min(longest + 1, model.config.maxSeqLen);
    const selfCache = options.newSelfCache?.(batch.length);
    try {
      const sources = batch.map((p) => p.source);
      outputs.push(
        ...(await greedyDecode(model, sources, { special: options.special, maxLength, selfCache })),
      );
    } finally {
      selfCache?.dispose();
    }
  }
  const correct = outputs.filter((out, i) => {
    const target = pairs[i].target;
    return out.ended && out.tokens.length === target.length && out.tokens.every((id, j) => id === target[j]);
  }).length;
  return { correct, total: pairs.length, outputs };
}
