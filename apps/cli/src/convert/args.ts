import type { GgufWeightType } from '@loom/models';
import { choiceFlag, type FlagSpec, readFlags, UsageError } from '../flags';

/** The formats `loom convert` writes. */
export type OutputFormat = 'llama2c' | 'loom' | 'hf' | 'gguf';

/** A parsed `loom convert` command line. */
export type ConvertCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'convert';
      readonly input: string;
      readonly output: string;
      readonly to: OutputFormat;
      readonly tokenizer: string | undefined;
      readonly weightType: GgufWeightType;
    };

export const USAGE = `usage: loom convert IN OUT [--to llama2c|loom|hf|gguf] [options]

  IN                        a model loom reads: llama2.c .bin, GGUF, a Loom checkpoint directory, or
                            safetensors with a Hugging Face config.json (the file or its directory)
  OUT                       what to write: a .bin file (llama2c), a .gguf file (gguf), or a directory (loom, hf)
      --to FORMAT           llama2c, loom (model.safetensors + config.json + tokenizer.json), hf (model.safetensors
                            + Hugging Face config.json) or gguf; default: from OUT's extension (.bin, .gguf)
      --tokenizer PATH      the tokenizer to carry along (default: the model's own, or one beside IN)
      --weight-type TYPE    GGUF matrices as F32, F16, BF16, Q8_0 or Q4_0 (default F32; loom quantize writes
                            Q4_K and Q6_K too)
  -h, --help                this text

The tokenizer travels along: inside a Loom checkpoint, as tokenizer.json beside Hugging Face weights, as
tokenizer.bin beside a llama2.c .bin (llama2.c tokenizers only) and as the GGUF vocabulary. Every file is
written atomically.`;

const SPEC: FlagSpec = {
  to: { type: 'string' },
  tokenizer: { type: 'string' },
  'weight-type': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const FORMATS: readonly OutputFormat[] = ['llama2c', 'loom', 'hf', 'gguf'];
const WEIGHT_TYPES: readonly GgufWeightType[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0'];

/** The format OUT's name implies, if any. */
function formatOf(output: string): OutputFormat | undefined {
  if (output.endsWith('.bin')) return 'llama2c';
  if (output.endsWith('.gguf')) return 'gguf';
  return undefined;
}

/** Parses the arguments after `loom convert`. */
export function parseConvertArgs(argv: readonly string[]): ConvertCommand {
  const flags = readFlags(argv, SPEC, 2);
  if (flags.switches.has('help')) return { kind: 'help' };
  const [input, output] = flags.positionals;
  if (input === undefined || output === undefined) {
    throw new UsageError('expected IN and OUT, the model to read and where to write it');
  }
  const implied = formatOf(output);
  const to = flags.values.has('to') ? choiceFlag(flags, 'to', FORMATS, 'loom') : implied;
  if (to === undefined) {
    throw new UsageError(
      `--to: required, as ${JSON.stringify(output)} ends in neither .bin nor .gguf; give loom or hf`,
    );
  }
  if (flags.values.has('weight-type') && to !== 'gguf')
    throw new UsageError('--weight-type: applies to --to gguf only');
  return {
    kind: 'convert',
    input,
    output,
    to,
    tokenizer: flags.values.get('tokenizer'),
    weightType: choiceFlag(flags, 'weight-type', WEIGHT_TYPES, 'F32'),
  };
}
