import { TOY_TASKS, type ToyTaskName } from '@loom/nn';
import { choiceFlag, type FlagSpec, type Flags, numberFlag, readFlags, UsageError } from '../flags';

/** The settings of a `loom seq2seq` run. */
export interface Seq2SeqRun {
  readonly kind: 'seq2seq';
  readonly task: ToyTaskName;
  readonly alphabet: number;
  readonly minLength: number;
  readonly maxLength: number;
  readonly steps: number;
  readonly batch: number;
  readonly lr: number;
  readonly dim: number;
  readonly layers: number;
  readonly heads: number;
  /** Held-out sources, never trained on, that exact-match is measured on. */
  readonly heldOut: number;
  readonly evalEvery: number;
  readonly examples: number;
  /** Beam width the examples are also decoded with (1: greedy only). */
  readonly beam: number;
  readonly seed: number;
  readonly threads: number | undefined;
}

/** A parsed `loom seq2seq` command line. */
export type Seq2SeqCommand = { readonly kind: 'help' } | Seq2SeqRun;

export const USAGE = `usage: loom seq2seq [--task reverse|sort] [options]

Trains an encoder–decoder transformer from scratch on a generated string task, then reports exact-match on
held-out strings (greedy decoding with the cross-attention and self-attention caches) and a few examples.

      --task NAME       reverse (default) or sort the symbols of a string
      --alphabet N      symbols in the alphabet (default 8, at most 26)
      --min-length N    shortest string (default 3)
      --max-length N    longest string (default 12)
      --steps N         training steps (default 1000)
      --batch N         strings per step (default 64)
      --lr X            peak learning rate of the warmup-cosine schedule (default 0.003)
      --dim N           model width (default 64)
      --layers N        encoder layers and decoder layers, each (default 2)
      --heads N         attention heads (default 4)
      --held-out N      held-out strings exact-match is measured on (default 1000)
      --eval-every N    steps between exact-match checks on 200 held-out strings (default 250; 0: only at the end)
      --examples N      examples printed at the end (default 5)
      --beam K          also decode the examples with beam search of width K (default 4; 1: greedy only)
      --seed N          seed of the data and the weights (default 1)
  -t, --threads N       CPU kernel threads
  -h, --help            this text`;

const SPEC: FlagSpec = {
  task: { type: 'string' },
  alphabet: { type: 'string' },
  'min-length': { type: 'string' },
  'max-length': { type: 'string' },
  steps: { type: 'string' },
  batch: { type: 'string' },
  lr: { type: 'string' },
  dim: { type: 'string' },
  layers: { type: 'string' },
  heads: { type: 'string' },
  'held-out': { type: 'string' },
  'eval-every': { type: 'string' },
  examples: { type: 'string' },
  beam: { type: 'string' },
  seed: { type: 'string' },
  threads: { type: 'string', short: 't' },
  help: { type: 'boolean', short: 'h' },
};

function count(flags: Flags, name: string, fallback: number, min = 1): number {
  return numberFlag(flags, name, fallback, true, min);
}

/** Parses the arguments after `loom seq2seq`. */
export function parseSeq2SeqArgs(argv: readonly string[]): Seq2SeqCommand {
  const flags = readFlags(argv, SPEC, 0);
  if (flags.switches.has('help')) return { kind: 'help' };
  const minLength = count(flags, 'min-length', 3);
  const maxLength = count(flags, 'max-length', 12);
  if (maxLength < minLength) {
    throw new UsageError(`--max-length: ${maxLength} is below --min-length ${minLength}; give max ≥ min`);
  }
  const alphabet = count(flags, 'alphabet', 8, 2);
  if (alphabet > 26) throw new UsageError(`--alphabet: at most 26 symbols, got ${alphabet}`);
  const lr = numberFlag(flags, 'lr', 3e-3);
  if (!(lr > 0)) throw new UsageError(`--lr: expected a positive number, got ${lr}`);
  return {
    kind: 'seq2seq',
    task: choiceFlag(flags, 'task', TOY_TASKS, 'reverse'),
    alphabet,
    minLength,
    maxLength,
    steps: count(flags, 'steps', 1000),
    batch: count(flags, 'batch', 64),
    lr,
    dim: count(flags, 'dim', 64),
    layers: count(flags, 'layers', 2),
    heads: count(flags, 'heads', 4),
    heldOut: count(flags, 'held-out', 1000),
    evalEvery: count(flags, 'eval-every', 250, 0),
    examples: count(flags, 'examples', 5, 0),
    beam: count(flags, 'beam', 4),
    seed: count(flags, 'seed', 1, 0),
    threads: flags.values.has('threads') ? count(flags, 'threads', 1) : undefined,
  };
}
