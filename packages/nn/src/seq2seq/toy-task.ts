import type { Seq2SeqTokens } from './teacher-forcing';

/** The generated seq2seq tasks: reverse a string, or sort its symbols. */
export type ToyTaskName = 'reverse' | 'sort';

/** Every generated task, in the order usage lists them. */
export const TOY_TASKS: readonly ToyTaskName[] = ['reverse', 'sort'];

/** One example: source and target token ids (no BOS or EOS). */
export interface Seq2SeqPair {
  readonly source: readonly number[];
  readonly target: readonly number[];
}

/** The shape of a generated task. */
export interface ToyTaskOptions {
  readonly task: ToyTaskName;
  /** Symbols of the alphabet (2..26; written a, b, c, ...). */
  readonly alphabet: number;
  readonly minLength: number;
  readonly maxLength: number;
}

/**
 * A generated string task over a small alphabet. Ids 0, 1, 2 are PAD, BOS and EOS; symbol i is id 3 + i.
 * `pair(draw)` makes a random example from uniform draws in [0, 1); `key` names a source, so a held-out set can
 * be kept out of training.
 */
export class ToyTask {
  readonly special: Seq2SeqTokens = { pad: 0, bos: 1, eos: 2 };
  readonly vocabSize: number;

  constructor(readonly options: ToyTaskOptions) {
    const { alphabet, minLength, maxLength, task } = options;
    if (!Number.isInteger(alphabet) || alphabet < 2 || alphabet > 26) {
      throw new Error(`ToyTask: alphabet must be an integer in [2, 26], got ${alphabet}`);
    }
    if (
      !Number.isInteger(minLength) ||
      !Number.isInteger(maxLength) ||
      minLength < 1 ||
      maxLength < minLength
    ) {
      throw new Error(
        `ToyTask: lengths must be integers with 1 ≤ minLength ≤ maxLength, got ${minLength}..${maxLength}`,
      );
    }
    if (!TOY_TASKS.includes(task)) {
      throw new Error(`ToyTask: unknown task '${task}'; expected one of ${TOY_TASKS.join(', ')}`);
    }
    this.vocabSize = 3 + alphabet;
  }

  /** The target of a source. */
  solve(source: readonly number[]): number[] {
    return this.options.task === 'reverse' ? [...source].reverse() : [...source].sort((a, b) => a - b);
  }

  /** A random example; `draw` returns uniform numbers in [0, 1). */
  pair(draw: () => number): Seq2SeqPair {
    const { alphabet, minLength, maxLength } = this.options;
    const length = minLength + Math.floor(draw() * (maxLength - minLength + 1));
    const source = Array.from({ length }, () => 3 + Math.floor(draw() * alphabet));
    return { source, target: this.solve(source) };
  }

  /** Ids as text: symbols as letters, EOS as '$', PAD as '_', BOS as '^'. */
  text(ids: readonly number[]): string {
    return ids.map((id) => (id >= 3 ? String.fromCharCode(94 + id) : ('_^$'[id] ?? '?'))).join('');
  }

  /** A string naming a source, for keeping held-out examples out of training. */
  key(source: readonly number[]): string {
    return source.join(',');
  }
}
