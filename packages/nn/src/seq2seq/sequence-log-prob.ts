import { scope } from '@loom/tensor';
import { logSoftmaxRows } from './hypothesis';
import type { EncoderDecoder } from './model';
import { type Seq2SeqTokens, sourceBatch, teacherForcing } from './teacher-forcing';

/**
 * log p(target | source) under the model with teacher forcing: the sum over the target's tokens and a final
 * EOS (when `ended`) of each one's log-probability given the source and the tokens before it. One full
 * forward pass, no cache: the independent reference for the scores greedy and beam search report.
 */
export async function sequenceLogProb(
  model: EncoderDecoder,
  source: readonly number[],
  target: readonly number[],
  special: Seq2SeqTokens,
  ended = true,
): Promise<number> {
  const { vocabSize } = model.config;
  const { inputs, labels } = teacherForcing([target], special, model.backend);
  const logits = scope(() => {
    const src = sourceBatch([source], special.pad, model.backend);
    return model.forward(src.ids, inputs, src.lengths); // [1, T, V]
  });
  const data = await logits.data();
  const wanted = await labels.data();
  for (const t of [logits, inputs, labels]) t.dispose();
  const rows = logSoftmaxRows(data, wanted.length, vocabSize);
  const scored = ended ? wanted.length : wanted.length - 1;
  let sum = 0;
  for (let i = 0; i < scored; i++) sum += rows[i][wanted[i]];
  return sum;
}
