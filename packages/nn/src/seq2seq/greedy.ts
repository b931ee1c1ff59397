import { scope, type Tensor, tensor } from '@loom/tensor';
import type { KVStore } from '../kv-store';
import { checkMaxLength, type Hypothesis, logSoftmaxRows } from './hypothesis';
import type { EncoderDecoder } from './model';
import type { Seq2SeqTokens } from './teacher-forcing';

/** How `greedyDecode` generates. */
export interface GreedyOptions {
  readonly special: Seq2SeqTokens;
  /** Most tokens generated per source, the EOS included. */
  readonly maxLength: number;
  /**
   * A fresh self-attention KV cache (e.g. a `KVCache` of @loom/kvcache with batch = sources, numLayers = decoder
   * layers, capacity ≥ maxLength): each step then feeds only the newest token. Without it each step runs the
   * whole target so far.
   */
  readonly selfCache?: KVStore;
}

/**
 * Greedy decoding of a batch of equal-length sources: the source is encoded and its cross-attention keys and
 * values projected once (the cross cache), then each step appends the most likely token to every row until
 * each has produced EOS or maxLength tokens.
 */
export async function greedyDecode(
  model: EncoderDecoder,
  sources: readonly (readonly number[])[],
  options: GreedyOptions,
): Promise<Hypothesis[]> {
  checkMaxLength('greedyDecode', options.maxLength, model.config.maxSeqLen);
  const { bos, eos } = options.special;
  const { vocabSize } = model.config;
  const cross = model.sourceCache(sources, options.special.pad);
  const rows = sources.map(() => ({ tokens: [bos], logProb: 0, ended: false }));
  try {
    for (let step = 0; step < options.maxLength && rows.some((r) => !r.ended); step++) {
      const cache = options.selfCache;
      const logits: Tensor = scope(() => {
        const fed = cache ? rows.map((r) => [r.tokens[step]]) : rows.map((r) => r.tokens);
        const ids = tensor(Int32Array.from(fed.flat()), [rows.length, fed[0].length], {
          backend: model.backend,
          dtype: 'i32',
        });
        const all = model.decode(ids, cross, cache ? { offset: step, cache } : { offset: 0 }); // [B, T, V]
        const t = all.shape[1];
        return all.slice([0, t - 1, 0], [rows.length, 1, vocabSize]); // [B, 1, V]
      });
      const data = await logits.data();
      logits.dispose();
      logSoftmaxRows(data, rows.length, vocabSize).forEach((logp, b) => {
        const row = rows[b];
        if (row.ended) {
          row.tokens.push(eos);
          return;
        }
        let next = 0;
        for (let j = 1; j < vocabSize; j++) if (logp[j] > logp[next]) next = j;
        row.logProb += logp[next];
        row.tokens.push(next);
        row.ended = next === eos;
      });
    }
  } finally {
    cross.dispose();
  }
  return rows.map((r) => {
    const generated = r.tokens.slice(1);
    const end = generated.indexOf(eos);
    return { tokens: end >= 0 ? generated.slice(0, end) : generated, logProb: r.logProb, ended: r.ended };
  });
}
