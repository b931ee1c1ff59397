import { DEFAULT_WEIGHTS, WEIGHTS_MODES } from '@loom/generate/model-flags';
import type { BackendName } from '@loom/generate/open-model';
import type { WeightsMode } from '@loom/models';
import { choiceFlag, type FlagSpec, numberFlag, readFlags, UsageError } from '../flags';

/** A parsed `loom perplexity` command line. */
export type PerplexityCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'perplexity';
      readonly model: string;
      readonly tokenizer: string | undefined;
      /** `quantized` scores with the file's blocks (the quantized kernels); `f32` widens them first. */
      readonly weights: WeightsMode;
      readonly file: string;
      /** Tokens per window; undefined: the model's maxSeqLen. */
      readonly context: number | undefined;
      /** Window step; undefined: half the context. */
      readonly stride: number | undefined;
      readonly threads: number | undefined;
      readonly backend: BackendName;
      readonly json: boolean;
    };

export const USAGE = `usage: loom perplexity -m MODEL [--tokenizer PATH] FILE [--context N] [--stride N] [options]

  FILE                  the text to score (UTF-8), encoded as generate encodes a prompt (BOS first for llama2.c
                        tokenizers)
  -m, --model PATH      any model loom reads: llama2.c .bin, GGUF (any of its tensor types), a Loom checkpoint,
                        Hugging Face safetensors
      --tokenizer PATH  its tokenizer (default: the model's own, or tokenizer.json / tokenizer.bin beside it)
      --weights MODE    quantized (default) scores with a GGUF file's Q8_0 / Q4_0 / Q4_K blocks as stored, through the
                        quantized kernels (on the CPU they round activations to int8 too, as llama.cpp does); f32
                        widens every weight to float32 first, to compare
  -c, --context N       tokens per window (default: the model's context length)
      --stride N        how far each window moves (default: half the context); each token after the first is
                        scored once, by the first window that reaches it
  -t, --threads N       CPU kernel threads
      --backend NAME    cpu or webgpu (default cpu)
      --json            print the result as one JSON object
  -h, --help            this text

Prints exp(mean negative log-likelihood) over the scored tokens, how many were scored, and the weights used (how many
linear layers read blocks, of which type).`;

const SPEC: FlagSpec = {
  model: { type: 'string', short: 'm' },
  tokenizer: { type: 'string' },
  weights: { type: 'string' },
  context: { type: 'string', short: 'c' },
  stride: { type: 'string' },
  threads: { type: 'string', short: 't' },
  backend: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const BACKENDS: readonly BackendName[] = ['cpu', 'webgpu'];

/** A positive integer flag, or undefined when absent. */
function optionalCount(flags: ReturnType<typeof readFlags>, name: string): number | undefined {
  return flags.values.has(name) ? numberFlag(flags, name, 0, true, 1) : undefined;
}

/** Parses the arguments after `loom perplexity`. */
export function parsePerplexityArgs(argv: readonly string[]): PerplexityCommand {
  const flags = readFlags(argv, SPEC, 1);
  if (flags.switches.has('help')) return { kind: 'help' };
  const model = flags.values.get('model');
  if (model === undefined) throw new UsageError('-m/--model: required, the model to score the text with');
  const [file] = flags.positionals;
  if (file === undefined) throw new UsageError('expected FILE, the text to score');
  return {
    kind: 'perplexity',
    model,
    tokenizer: flags.values.get('tokenizer'),
    weights: choiceFlag(flags, 'weights', WEIGHTS_MODES, DEFAULT_WEIGHTS),
    file,
    context: optionalCount(flags, 'context'),
    stride: optionalCount(flags, 'stride'),
    threads: optionalCount(flags, 'threads'),
    backend: choiceFlag(flags, 'backend', BACKENDS, 'cpu'),
    json: flags.switches.has('json'),
  };
}
