import type { SpecialTokens } from '@loom/nn';
import type { Tokenizer } from '@loom/tokenizer';
import type { Batch } from '../batches';
import { keyedSeed, randomInt, type StreamName } from '../random';

/** The letters of the generated classification task; the label says whether a string has more a than b. */
export const COUNT_TASK_LETTERS = ['a', 'b', 'c'] as const;

/** Classes of the task: 0 (no more a than b), 1 (more a than b). */
export const COUNT_TASK_CLASSES = 2;

/** The task's token ids: one per letter, plus [CLS] and padding. */
export interface CountTaskIds {
  readonly letters: readonly number[];
  readonly special: SpecialTokens;
}

/** The ids of the task's letters in `tokenizer`; throws unless each letter is exactly one token. */
export function countTaskIds(tokenizer: Tokenizer, special: SpecialTokens): CountTaskIds {
  const letters = COUNT_TASK_LETTERS.map((letter) => {
    const fail = (how: string): never => {
      throw new Error(
        `--objective classify: the task writes strings of ${COUNT_TASK_LETTERS.join(', ')}, but the tokenizer ${how}; ` +
          'train on a text that holds these letters (--data, or the default stories)',
      );
    };
    let ids: number[] = [];
    try {
      ids = tokenizer.encode(letter);
    } catch (error) {
      fail(
        `cannot encode ${JSON.stringify(letter)} (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    if (ids.length !== 1) fail(`encodes ${JSON.stringify(letter)} as ${ids.length} tokens, not one`);
    return ids[0];
  });
  return { letters, special };
}

/**
 * Batch `index` of a stream of the generated task "does the string hold more a than b?": each row is [CLS],
 * then 1..block-1 random letters, right-padded to `block`; `labels` holds the answer, `lengths` the real
 * tokens ([CLS] included). A pure function of (seed, stream, index); the validation stream is drawn from its
 * own seed, so its examples are held out in the sense of independent draws (a short string may recur).
 */
export function countTaskBatch(
  ids: CountTaskIds,
  seed: number,
  stream: StreamName,
  index: number,
  rows: number,
  block: number,
): Batch {
  if (block < 2)
    throw new Error(`--objective classify needs --block >= 2 ([CLS] and a letter), got ${block}`);
  const key = keyedSeed(keyedSeed(seed, stream, index), 'classify', 0);
  const inputs = new Int32Array(rows * block).fill(ids.special.pad);
  const targets = new Int32Array(rows * block).fill(-100);
  const labels = new Int32Array(rows);
  const lengths: number[] = [];
  let counter = 0;
  for (let row = 0; row < rows; row++) {
    const letters = 1 + randomInt(key, counter++, block - 1);
    const counts = [0, 0, 0];
    inputs[row * block] = ids.special.cls;
    for (let i = 1; i <= letters; i++) {
      const letter = randomInt(key, counter++, COUNT_TASK_LETTERS.length);
      counts[letter]++;
      inputs[row * block + i] = ids.letters[letter];
    }
    labels[row] = counts[0] > counts[1] ? 1 : 0;
    lengths.push(letters + 1);
  }
  return { rows, block, inputs, targets, labels, lengths };
}
