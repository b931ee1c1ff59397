import type { TransformerEncoder } from '@loom/nn';
import { argmax, scope, tensor } from '@loom/tensor';
import type { Tokenizer } from '@loom/tokenizer';
import type { Batch } from '../batches';

/** What stands for a position the model has to guess. */
const BLANK = '_';

/**
 * The first row of a masked batch as text three times: as it was, with every selected position blanked, and with
 * the model's guesses written there (greedy; '?' for a special id), so a reader sees what masked-token training learned.
 */
export async function fillIn(model: TransformerEncoder, batch: Batch, tokenizer: Tokenizer): Promise<string> {
  const { block } = batch;
  const inputs = batch.inputs.subarray(0, block);
  const targets = batch.targets.subarray(0, block);
  const wasTraining = model.training;
  model.eval();
  let guessed: ArrayLike<number>;
  try {
    const guesses = scope(() =>
      argmax(model.mlmLogits(model.hidden(tensor(inputs, [1, block], { dtype: 'i32' }))), -1),
    ); // [1, T]
    guessed = await guesses.data().finally(() => guesses.dispose());
  } finally {
    model.train(wasTraining);
  }
  const piece = (id: number) => (id < tokenizer.vocabSize ? tokenizer.decode([id]) : '?');
  const line = (pick: (i: number) => string) =>
    JSON.stringify(Array.from(inputs, (_, i) => pick(i)).join(''));
  const selected = (i: number) => targets[i] >= 0;
  return [
    `original: ${line((i) => piece(selected(i) ? targets[i] : inputs[i]))}`,
    `masked:   ${line((i) => (selected(i) ? BLANK : piece(inputs[i])))}`,
    `filled:   ${line((i) => piece(selected(i) ? guessed[i] : inputs[i]))}`,
    '',
  ].join('\n');
}
