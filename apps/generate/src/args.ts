/** The backends the CLI can run on. */
export type BackendName = 'cpu' | 'webgpu';

/** A parsed `pnpm generate` command line. */
export type Command =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'generate';
      readonly model: string;
      readonly tokenizer: string | undefined;
      readonly prompt: string;
      readonly maxTokens: number;
      /** Positions of the KV cache; undefined sizes it for the prompt plus maxTokens. */
      readonly context: number | undefined;
      readonly temperature: number;
      readonly topK: number;
      readonly topP: number;
      readonly minP: number;
      readonly repetitionPenalty: number;
      readonly seed: number | undefined;
      readonly stop: readonly string[];
      readonly backend: BackendName;
      readonly json: boolean;
    };

export const USAGE = `usage: pnpm generate --model PATH --prompt TEXT [options]

  --model PATH              llama2.c .bin, safetensors with config.json (Hugging Face or Loom), or a Loom checkpoint directory
  --tokenizer PATH          tokenizer file (default: the checkpoint's own, or tokenizer.json / tokenizer.bin beside the model)
  --prompt TEXT             text to continue (default: empty, which llama2.c models start from BOS)
  --max-tokens N            new tokens at most (default 256; generation also stops at EOS or a full context)
  --context N               positions of the KV cache, at most the model's maximum (default: the prompt plus --max-tokens)
  --temperature T           0 is greedy (default 1)
  --top-k K                 keep the K likeliest tokens; 0 is off (default 0)
  --top-p P                 nucleus sampling, in (0, 1]; 1 is off (default 0.9)
  --min-p P                 keep tokens at least P times as likely as the likeliest (default 0)
  --repetition-penalty R    penalise tokens already seen, R > 0; 1 is off (default 1)
  --seed S                  seed of the sampler (default: from the clock; printed with --json)
  --stop STR                stop when the text reaches STR (repeatable)
  --backend cpu|webgpu      where to run (default cpu)
  --json                    print one JSON object (tokens, text, stop reason, timings) instead of streaming text
  --help                    this text

Relative paths are resolved against the directory pnpm was started from.`;

/** A command line that cannot be run; the CLI prints it with the usage and exits with status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

function numberFlag(flag: string, value: string, integer: boolean): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || (integer && !Number.isInteger(parsed))) {
    throw new UsageError(
      `${flag}: expected ${integer ? 'an integer' : 'a number'}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

function positiveFlag(flag: string, value: string): number {
  const parsed = numberFlag(flag, value, true);
  if (parsed < 1) throw new UsageError(`${flag}: expected a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
}

/** Parses the arguments after `pnpm generate` (a leading `--` is ignored). */
export function parseArgs(argv: readonly string[]): Command {
  const values = new Map<string, string>();
  const stop: string[] = [];
  let json = false;
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (flag === '--help' || flag === '-h') return { kind: 'help' };
    if (flag === '--json') {
      json = true;
      continue;
    }
    const known = [
      '--model',
      '--tokenizer',
      '--prompt',
      '--max-tokens',
      '--context',
      '--temperature',
      '--top-k',
      '--top-p',
      '--min-p',
      '--repetition-penalty',
      '--seed',
      '--stop',
      '--backend',
    ];
    if (!known.includes(flag)) throw new UsageError(`unknown argument ${JSON.stringify(flag)}`);
    const value = args[++i];
    if (value === undefined) throw new UsageError(`${flag}: expected a value after it`);
    if (flag === '--stop') stop.push(value);
    else values.set(flag, value);
  }
  const model = values.get('--model');
  if (model === undefined)
    throw new UsageError('--model: required; give the path of a model file or directory');
  const backend = values.get('--backend') ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new UsageError(`--backend: expected cpu or webgpu, got ${JSON.stringify(backend)}`);
  }
  const number = (flag: string, fallback: number, integer = false) => {
    const value = values.get(flag);
    return value === undefined ? fallback : numberFlag(flag, value, integer);
  };
  const seed = values.get('--seed');
  const context = values.get('--context');
  return {
    kind: 'generate',
    model,
    tokenizer: values.get('--tokenizer'),
    prompt: values.get('--prompt') ?? '',
    maxTokens: number('--max-tokens', 256, true),
    context: context === undefined ? undefined : positiveFlag('--context', context),
    temperature: number('--temperature', 1),
    topK: number('--top-k', 0, true),
    topP: number('--top-p', 0.9),
    minP: number('--min-p', 0),
    repetitionPenalty: number('--repetition-penalty', 1),
    seed: seed === undefined ? undefined : numberFlag('--seed', seed, true),
    stop,
    backend,
    json,
  };
}
