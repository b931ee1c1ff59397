import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs as parseFlags } from 'node:util';
import { ARCH_NAMES, OBJECTIVES } from './arch/names';
import {
  BACKENDS,
  defaultOptions,
  type GivenOptions,
  NONFINITE_POLICIES,
  PRESETS,
  TOKENIZERS,
  type TrainOptions,
} from './options';

/** A command line that cannot be understood; the CLI prints the usage after it. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What a command line asks for. */
export type Command = { readonly kind: 'help' } | { readonly kind: 'train'; readonly given: GivenOptions };

/** Whether a resumed run may change an option: those that shape the model, data or optimisation may not. */
type OnResume = 'fixed' | 'adjustable';

interface Flag {
  readonly name: string;
  /** One-letter alias, as llama.cpp's (`-s` for the seed). */
  readonly short?: string;
  /** Placeholder of the value in the usage text. */
  readonly value: string;
  readonly help: string;
  readonly onResume: OnResume;
  /** Turns the raw value into options; throws a UsageError naming the flag. */
  readonly read: (raw: string, baseDir: string) => GivenOptions;
  /** The option's value, written back as this flag's value. */
  readonly get: (o: TrainOptions) => string | number | undefined;
}

function number(name: string, raw: string): number {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value))
    throw new UsageError(`--${name}: expected a number, got ${JSON.stringify(raw)}`);
  return value;
}

function integer(name: string, raw: string, min: number, max: number): number {
  const value = number(name, raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in ${min}..${max}`;
    throw new UsageError(`--${name}: expected ${range}, got ${raw}`);
  }
  return value;
}

/** A number in [min, max), or in (0, max) when `min` is 'positive'. */
function ranged(name: string, raw: string, min: number | 'positive', max: number): number {
  const value = number(name, raw);
  const low = min === 'positive' ? value <= 0 : value < min;
  if (low || value >= max) {
    const range = min === 'positive' ? `> 0 and < ${max}` : `in [${min}, ${max})`;
    throw new UsageError(`--${name}: expected a number ${range}, got ${raw}`);
  }
  return value;
}

function choice<T extends string>(name: string, raw: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === raw);
  if (found === undefined)
    throw new UsageError(`--${name}: expected one of ${choices.join(', ')}, got ${raw}`);
  return found;
}

interface Spec<T extends string | number> {
  readonly help: string;
  readonly onResume: OnResume;
  readonly set: (value: T) => GivenOptions;
  readonly get: (o: TrainOptions) => T | undefined;
}

function flag<T extends string | number>(
  name: string,
  value: string,
  spec: Spec<T>,
  parse: (raw: string, base: string) => T,
): Flag {
  return {
    name,
    value,
    help: spec.help,
    onResume: spec.onResume,
    get: spec.get,
    read: (raw, base) => spec.set(parse(raw, base)),
  };
}

function int(name: string, spec: Spec<number> & { readonly min: number; readonly max?: number }): Flag {
  return flag(name, 'N', spec, (raw) => integer(name, raw, spec.min, spec.max ?? Number.MAX_SAFE_INTEGER));
}

function real(
  name: string,
  spec: Spec<number> & { readonly min: number | 'positive'; readonly max?: number },
): Flag {
  return flag(name, 'X', spec, (raw) => ranged(name, raw, spec.min, spec.max ?? Number.POSITIVE_INFINITY));
}

function oneOf<T extends string>(name: string, choices: readonly T[], spec: Spec<T>): Flag {
  return flag(name, choices.join('|'), spec, (raw) => choice(name, raw, choices));
}

function path(name: string, value: string, spec: Spec<string>): Flag {
  return flag(name, value, spec, (raw, base) => resolve(base, raw));
}

const fixed = 'fixed';
const adjustable = 'adjustable';

/** Every flag, in the order the usage lists them. */
const FLAGS: readonly Flag[] = [
  path('data', 'FILE', {
    help: 'UTF-8 text to train on (first 90% train, last 10% val); default: generated stories',
    onResume: adjustable,
    set: (data) => ({ data }),
    get: (o) => o.data,
  }),
  oneOf('tokenizer', TOKENIZERS, {
    help: 'character-level (default), or a byte-level BPE trained on the training split',
    onResume: fixed,
    set: (tokenizer) => ({ tokenizer }),
    get: (o) => o.tokenizer,
  }),
  oneOf('arch', ARCH_NAMES, {
    help: 'decoder-only language model, encoder-only (BERT-style), or Mamba (selective state space)',
    onResume: fixed,
    set: (arch) => ({ arch }),
    get: (o) => o.arch,
  }),
  oneOf('objective', OBJECTIVES, {
    help: 'clm (decoder), mlm or classify (encoder: the generated "more a than b?" task); default: the arch\'s first',
    onResume: fixed,
    set: (objective) => ({ objective }),
    get: (o) => o.objective,
  }),
  int('vocab-size', {
    help: 'vocabulary size of --tokenizer bpe',
    min: 257,
    onResume: fixed,
    set: (vocabSize) => ({ vocabSize }),
    get: (o) => o.vocabSize,
  }),
  oneOf('preset', PRESETS, {
    help: 'model family',
    onResume: fixed,
    set: (preset) => ({ preset }),
    get: (o) => o.preset,
  }),
  int('layers', {
    help: 'decoder blocks',
    min: 1,
    onResume: fixed,
    set: (layers) => ({ layers }),
    get: (o) => o.layers,
  }),
  int('heads', {
    help: 'attention heads',
    min: 1,
    onResume: fixed,
    set: (heads) => ({ heads }),
    get: (o) => o.heads,
  }),
  int('kv-heads', {
    help: 'key/value heads, llama only (default: --heads)',
    min: 1,
    onResume: fixed,
    set: (kvHeads) => ({ kvHeads }),
    get: (o) => o.kvHeads,
  }),
  int('dim', {
    help: 'model width',
    min: 1,
    onResume: fixed,
    set: (dim) => ({ dim }),
    get: (o) => o.dim,
  }),
  int('block', {
    help: 'context length in tokens',
    min: 1,
    onResume: fixed,
    set: (block) => ({ block }),
    get: (o) => o.block,
  }),
  int('batch', {
    help: 'sequences per micro-batch',
    min: 1,
    onResume: fixed,
    set: (batch) => ({ batch }),
    get: (o) => o.batch,
  }),
  int('grad-accum', {
    help: 'micro-batches averaged into each update',
    min: 1,
    onResume: fixed,
    set: (gradAccum) => ({ gradAccum }),
    get: (o) => o.gradAccum,
  }),
  real('lr', {
    help: 'peak learning rate',
    min: 'positive',
    onResume: fixed,
    set: (lr) => ({ lr }),
    get: (o) => o.lr,
  }),
  real('min-lr', {
    help: 'floor of the cosine decay',
    min: 0,
    onResume: fixed,
    set: (minLr) => ({ minLr }),
    get: (o) => o.minLr,
  }),
  int('warmup', {
    help: 'steps of linear warm-up',
    min: 0,
    onResume: fixed,
    set: (warmup) => ({ warmup }),
    get: (o) => o.warmup,
  }),
  int('iters', {
    help: 'optimizer steps; the cosine reaches --min-lr there',
    min: 1,
    onResume: adjustable,
    set: (iters) => ({ iters }),
    get: (o) => o.iters,
  }),
  real('weight-decay', {
    help: 'AdamW decoupled weight decay',
    min: 0,
    onResume: fixed,
    set: (weightDecay) => ({ weightDecay }),
    get: (o) => o.weightDecay,
  }),
  real('beta1', {
    help: 'AdamW beta1',
    min: 0,
    max: 1,
    onResume: fixed,
    set: (beta1) => ({ beta1 }),
    get: (o) => o.beta1,
  }),
  real('beta2', {
    help: 'AdamW beta2',
    min: 0,
    max: 1,
    onResume: fixed,
    set: (beta2) => ({ beta2 }),
    get: (o) => o.beta2,
  }),
  real('clip', {
    help: 'clip the global gradient norm to this; 0: no clipping',
    min: 0,
    onResume: fixed,
    set: (clip) => ({ clip }),
    get: (o) => o.clip,
  }),
  real('dropout', {
    help: 'dropout probability',
    min: 0,
    max: 1,
    onResume: fixed,
    set: (dropout) => ({ dropout }),
    get: (o) => o.dropout,
  }),
  {
    ...int('seed', {
      help: 'seed of the weights, data order, dropout and sampling',
      min: 0,
      max: 2 ** 32 - 1,
      onResume: fixed,
      set: (seed) => ({ seed }),
      get: (o) => o.seed,
    }),
    short: 's',
  },
  oneOf('backend', BACKENDS, {
    help: 'where to compute',
    onResume: adjustable,
    set: (backend) => ({ backend }),
    get: (o) => o.backend,
  }),
  int('eval-every', {
    help: 'steps between evaluations; 0: only at the end',
    min: 0,
    onResume: adjustable,
    set: (evalEvery) => ({ evalEvery }),
    get: (o) => o.evalEvery,
  }),
  int('eval-batches', {
    help: 'batches per loss estimate',
    min: 1,
    onResume: adjustable,
    set: (evalBatches) => ({ evalBatches }),
    get: (o) => o.evalBatches,
  }),
  int('ckpt-every', {
    help: 'steps between checkpoints; 0: only at the end',
    min: 0,
    onResume: adjustable,
    set: (ckptEvery) => ({ ckptEvery }),
    get: (o) => o.ckptEvery,
  }),
  path('out', 'DIR', {
    help: 'checkpoint, log and loss-curve directory (default out/latest; with --resume, that directory)',
    onResume: adjustable,
    set: (out) => ({ out }),
    get: (o) => o.out,
  }),
  path('resume', 'DIR', {
    help: 'continue the run saved in this checkpoint directory',
    onResume: adjustable,
    set: (resume) => ({ resume }),
    get: (o) => o.resume,
  }),
  path('init-from', 'CKPT', {
    help: 'start from this model (Loom checkpoint dir, safetensors + config.json, llama2.c .bin); its shape wins',
    onResume: fixed,
    set: (initFrom) => ({ initFrom }),
    get: (o) => o.initFrom,
  }),
  path('init-tokenizer', 'FILE', {
    help: "--init-from's tokenizer when it has none (llama2.c: tok512.bin for stories260K); default: its own, else --tokenizer",
    onResume: fixed,
    set: (initTokenizer) => ({ initTokenizer }),
    get: (o) => o.initTokenizer,
  }),
  int('lora-rank', {
    help: 'train rank-R LoRA adapters on the frozen model instead of every weight (default 0: off)',
    min: 0,
    onResume: fixed,
    set: (loraRank) => ({ loraRank }),
    get: (o) => o.loraRank,
  }),
  real('lora-alpha', {
    help: 'LoRA scale numerator: updates scaled by alpha / rank (default: the rank)',
    min: 'positive',
    onResume: fixed,
    set: (loraAlpha) => ({ loraAlpha }),
    get: (o) => o.loraAlpha,
  }),
  real('lora-dropout', {
    help: "dropout on each LoRA adapter's input",
    min: 0,
    max: 1,
    onResume: fixed,
    set: (loraDropout) => ({ loraDropout }),
    get: (o) => o.loraDropout,
  }),
  flag<string>(
    'lora-targets',
    'LIST',
    {
      help: 'modules to adapt: q_proj,v_proj,... or wq,wv,... (default: q_proj,v_proj; gpt2 c_attn)',
      onResume: fixed,
      set: (loraTargets) => ({ loraTargets }),
      get: (o) => o.loraTargets,
    },
    (raw) => {
      if (raw.trim() === '')
        throw new UsageError('--lora-targets: expected module names, got an empty string');
      return raw;
    },
  ),
  oneOf('on-nonfinite', NONFINITE_POLICIES, {
    help: 'on a NaN/Inf loss or gradient norm: stop the run (default) or skip the update',
    onResume: adjustable,
    set: (onNonfinite) => ({ onNonfinite }),
    get: (o) => o.onNonfinite,
  }),
  int('max-skipped-steps', {
    help: 'with --on-nonfinite skip: fail the run when it drops more updates than this in all',
    min: 0,
    onResume: adjustable,
    set: (maxSkippedSteps) => ({ maxSkippedSteps }),
    get: (o) => o.maxSkippedSteps,
  }),
  int('sample-tokens', {
    help: 'tokens to generate after training; 0: none',
    min: 0,
    onResume: adjustable,
    set: (sampleTokens) => ({ sampleTokens }),
    get: (o) => o.sampleTokens,
  }),
  real('temperature', {
    help: 'sampling temperature; 0: greedy',
    min: 0,
    onResume: adjustable,
    set: (temperature) => ({ temperature }),
    get: (o) => o.temperature,
  }),
  flag<string>(
    'prompt',
    'TEXT',
    {
      help: 'start of the sample (default: "Once upon a time" for the stories, else a newline)',
      onResume: adjustable,
      set: (prompt) => ({ prompt }),
      get: (o) => o.prompt,
    },
    (raw) => {
      if (raw === '') throw new UsageError('--prompt: expected some text, got an empty string');
      return raw;
    },
  ),
];

/** The flag's help with its default value, unless the help already says what the default is. */
function withDefault(flag: Flag): string {
  const value = flag.get(defaultOptions('out/latest'));
  return value === undefined || flag.help.includes('default') ? flag.help : `${flag.help} (default ${value})`;
}

export const USAGE = [
  'usage: loom train [flags]     (no flags: a small demo run on generated short stories)',
  '',
  ...FLAGS.map(
    (f) =>
      `  ${f.short === undefined ? '   ' : `-${f.short},`} --${`${f.name} ${f.value}`.padEnd(24)} ${withDefault(f)}`,
  ),
  `  -h, ${'--help'.padEnd(26)} this text`,
  '',
  'example (the reference run):',
  '  loom train --data ../shared/data/tinyshakespeare.txt --preset gpt2 --layers 4 --heads 4 --dim 128 \\',
  '    --block 64 --batch 12 --lr 1e-3 --min-lr 1e-4 --beta2 0.99 --weight-decay 0.1 --warmup 100 \\',
  '    --iters 2000 --clip 1 --dropout 0 --eval-every 250',
].join('\n');

/** The flags in `util.parseArgs`'s form: every one takes a value. */
const OPTIONS: ParseArgsConfig['options'] = {
  ...Object.fromEntries(
    FLAGS.map((f) => [
      f.name,
      f.short === undefined ? { type: 'string' } : { type: 'string', short: f.short },
    ]),
  ),
  help: { type: 'boolean', short: 'h' },
};

/**
 * Parses `--flag value`, `--flag=value` and `-s value` arguments with util.parseArgs (leniently, so that each
 * mistake gets a message naming the flag); relative paths resolve against `baseDir` (where the user ran pnpm).
 * Every flag may appear once; `--` is ignored.
 */
export function parseArgs(argv: readonly string[], baseDir: string): Command {
  const { tokens } = parseFlags({
    args: argv.filter((arg) => arg !== '--'),
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  let given: GivenOptions = {};
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'positional')
      throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}; flags start with --`);
    if (token.kind !== 'option') continue;
    if (token.name === 'help') return { kind: 'help' };
    const flag = FLAGS.find((f) => f.name === token.name);
    if (!flag) throw new UsageError(`unknown flag ${token.rawName}`);
    if (seen.has(flag.name)) throw new UsageError(`--${flag.name} is given twice`);
    seen.add(flag.name);
    if (token.value === undefined) throw new UsageError(`--${flag.name}: expected a value (${flag.value})`);
    given = { ...given, ...flag.read(token.value, baseDir) };
  }
  return { kind: 'train', given };
}

/** Flags that reproduce `options` exactly (numbers print as the shortest text that reads back the same). */
export function optionsToArgs(options: TrainOptions): string[] {
  return FLAGS.flatMap((flag) => {
    const value = flag.get(options);
    return value === undefined ? [] : [`--${flag.name}`, String(value)];
  });
}

/**
 * Options of a resumed run: the saved ones, with the adjustable flags given now applied.
 * Changing a fixed one (the model, the data order, the optimisation) is refused, naming it.
 */
export function mergeResumed(saved: TrainOptions, given: GivenOptions): TrainOptions {
  const merged = { ...saved, ...given };
  const changed = FLAGS.filter((f) => f.onResume === 'fixed' && f.get(merged) !== f.get(saved)).map(
    (f) => `--${f.name} ${f.get(merged)} (the checkpoint has ${f.get(saved)})`,
  );
  if (changed.length > 0) {
    throw new UsageError(
      `a resumed run keeps the model, data order and optimisation of its checkpoint; these differ: ${changed.join(', ')}. ` +
        'Drop them, or start a new run with a different --out',
    );
  }
  return merged;
}
