import { type ParseArgsConfig, parseArgs as parseFlags } from 'node:util';
import type { WeightsMode } from '@loom/models';
import { DEFAULT_WEIGHTS, MODEL_FLAGS, WEIGHTS_MODES } from './model-flags';

/** The backends the CLI can run on. */
export type BackendName = 'cpu' | 'webgpu';

/** A parsed `loom generate` command line. */
export type Command =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'generate';
      readonly model: string;
      readonly tokenizer: string | undefined;
      /** How the weights are held: the file's blocks kept (`quantized`) or widened (`f32`). */
      readonly weights: WeightsMode;
      readonly prompt: string;
      readonly maxTokens: number;
      /** Positions of the KV cache; undefined sizes it for the prompt plus maxTokens. */
      readonly context: number | undefined;
      /** Slide the window when the context is full (false with --no-context-shift: stop there). */
      readonly contextShift: boolean;
      readonly temperature: number;
      readonly topK: number;
      readonly topP: number;
      readonly minP: number;
      readonly repetitionPenalty: number;
      readonly seed: number | undefined;
      readonly stop: readonly string[];
      /** CPU kernel threads; undefined leaves the backend's default. */
      readonly threads: number | undefined;
      readonly backend: BackendName;
      readonly json: boolean;
    };

export const USAGE = `usage: loom generate -m PATH -p TEXT [options]

  -m, --model PATH              llama2.c .bin, GGUF, safetensors with config.json (Hugging Face or Loom), or a Loom checkpoint directory
      --tokenizer PATH          tokenizer file (default: the checkpoint's own, or tokenizer.json / tokenizer.bin beside the model)
      --weights quantized|f32   quantized (default) keeps what the file stores: a GGUF file's Q8_0 / Q4_0 / Q4_K / Q6_K
                                blocks and a GGUF or safetensors file's F16 / BF16 linear layers stay as stored, which
                                their products read; f32 widens every weight to float32
  -p, --prompt TEXT             text to continue (default: empty, which llama2.c models start from BOS)
  -n, --max-tokens N            new tokens at most (default 256; generation also stops at EOS)
  -c, --context N               positions of the KV cache, at most the model's maximum (default: the prompt plus --max-tokens)
      --no-context-shift        stop when the context is full (stop reason context-full) instead of sliding the window
      --temperature T           0 is greedy (default 1)
      --top-k K                 keep the K likeliest tokens; 0 is off (default 0)
      --top-p P                 nucleus sampling, in (0, 1]; 1 is off (default 0.9)
      --min-p P                 keep tokens at least P times as likely as the likeliest (default 0)
      --repetition-penalty R    penalise tokens already seen, R > 0; 1 is off (default 1)
  -s, --seed S                  seed of the sampler (default: from the clock; printed with --json)
      --stop STR                stop when the text reaches STR (repeatable)
  -t, --threads N               CPU threads of the matrix kernels (default: the machine's, at most 8)
      --backend cpu|webgpu      where to run (default cpu)
      --json                    print one JSON object (tokens, text, stop reason, weights, timings) instead of streaming text
  -h, --help                    this text

A full context slides as llama.cpp's context shift does: BOS stays, the oldest half of the rest goes.
Relative paths are resolved against the directory pnpm was started from (INIT_CWD), else the current one.`;

/** A command line that cannot be run; the CLI prints it on one line and exits with status 2. */
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

/** Every flag, in `util.parseArgs`'s form; short aliases as in llama.cpp. */
const OPTIONS = {
  ...MODEL_FLAGS,
  prompt: { type: 'string', short: 'p' },
  stop: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

type FlagName = keyof typeof OPTIONS & string;

function isFlag(name: string): name is FlagName {
  return Object.hasOwn(OPTIONS, name);
}

/**
 * The flags given, by name (`--flag value`, `--flag=value`, `-m value`, `-mvalue`), each once but `--stop`;
 * util.parseArgs reads them leniently so that each mistake gets a message naming the flag.
 */
function readFlags(args: readonly string[]): {
  values: Map<FlagName, string>;
  stop: string[];
  switches: Set<FlagName>;
} {
  const { tokens } = parseFlags({
    args: [...args],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<FlagName, string>();
  const switches = new Set<FlagName>();
  const stop: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}; quote the prompt after -p`);
    }
    if (token.kind !== 'option') continue;
    const { name, rawName, value } = token;
    if (!isFlag(name)) throw new UsageError(`unknown argument ${JSON.stringify(rawName)}`);
    const flag = `--${name}`;
    if (OPTIONS[name].type === 'boolean') {
      if (value !== undefined) throw new UsageError(`${flag}: takes no value; write just ${flag}`);
      switches.add(name);
    } else if (value === undefined) {
      throw new UsageError(`${flag}: expected a value after it`);
    } else if (name === 'stop') {
      stop.push(value);
    } else if (values.has(name)) {
      throw new UsageError(`${flag}: given twice; give it once`);
    } else {
      values.set(name, value);
    }
  }
  return { values, stop, switches };
}

/** Parses the arguments after `loom generate` (a leading `--` is ignored). */
export function parseArgs(argv: readonly string[]): Command {
  const { values, stop, switches } = readFlags(argv[0] === '--' ? argv.slice(1) : argv);
  if (switches.has('help')) return { kind: 'help' };
  const model = values.get('model');
  if (model === undefined)
    throw new UsageError('--model: required; give the path of a model file or directory');
  const backend = values.get('backend') ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new UsageError(`--backend: expected cpu or webgpu, got ${JSON.stringify(backend)}`);
  }
  const weights = values.get('weights') ?? DEFAULT_WEIGHTS;
  const mode = WEIGHTS_MODES.find((m) => m === weights);
  if (mode === undefined) {
    throw new UsageError(`--weights: expected ${WEIGHTS_MODES.join(' or ')}, got ${JSON.stringify(weights)}`);
  }
  const number = (name: FlagName, fallback: number, integer = false) => {
    const value = values.get(name);
    return value === undefined ? fallback : numberFlag(`--${name}`, value, integer);
  };
  const optional = (name: FlagName) => {
    const value = values.get(name);
    return value === undefined ? undefined : positiveFlag(`--${name}`, value);
  };
  const seed = values.get('seed');
  return {
    kind: 'generate',
    model,
    tokenizer: values.get('tokenizer'),
    weights: mode,
    prompt: values.get('prompt') ?? '',
    maxTokens: number('max-tokens', 256, true),
    context: optional('context'),
    contextShift: !switches.has('no-context-shift'),
    temperature: number('temperature', 1),
    topK: number('top-k', 0, true),
    topP: number('top-p', 0.9),
    minP: number('min-p', 0),
    repetitionPenalty: number('repetition-penalty', 1),
    seed: seed === undefined ? undefined : numberFlag('--seed', seed, true),
    stop,
    threads: optional('threads'),
    backend,
    json: switches.has('json'),
  };
}
