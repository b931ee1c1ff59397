import type { GgufWeightType } from '@loom/models';
import { type FlagSpec, readFlags, UsageError } from '../flags';

/** A parsed `loom quantize` command line. */
export type QuantizeCommand =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'quantize';
      readonly input: string;
      readonly output: string;
      readonly type: Exclude<GgufWeightType, 'F32'>;
      readonly tokenizer: string | undefined;
      /** Every matrix in `type`, the output projection too. */
      readonly pure: boolean;
      readonly calibration: Calibration;
    };

/** What Q4_0 matrices are calibrated on: text the model writes, a text file, or nothing (llama.cpp's rounding). */
export type Calibration =
  | { readonly kind: 'auto' }
  | { readonly kind: 'none' }
  | { readonly kind: 'file'; readonly path: string };

export const USAGE = `usage: loom quantize --type q8_0|q4_0|q4_k|q6_k IN OUT.gguf [--tokenizer PATH] [--pure] [--calibration auto|none|FILE]

  IN                   a model loom reads: llama2.c .bin, GGUF, a Loom checkpoint directory, or safetensors
                       with a Hugging Face config.json (the file or its directory)
  OUT.gguf             the GGUF file to write (atomically)
      --type TYPE      how weight matrices are stored: q8_0, q4_0 (blocks of 32), q4_k, q6_k (super-blocks of 256),
                       quantized as llama.cpp's reference quantizer does, except Q4_0 matrices (below)
      --tokenizer PATH the vocabulary to write (default: the model's own, or one beside IN)
      --pure           store the output projection in TYPE too (default: in q6_k, or q8_0 for --type q8_0, as
                       llama-quantize does: output.weight, or the token embeddings when they are tied)
      --calibration C  how Q4_0 matrices are rounded (those of q4_0, and of q4_k where rows are not whole
                       super-blocks): auto (default) runs the model on text it writes itself (8 sequences of up to
                       256 tokens from BOS, seeded, so the output repeats) and rounds each matrix to keep its outputs
                       close on those inputs (GPTQ, error compensation through the inputs' second moments, for
                       inputs of up to 1024 features; importance-weighted rounding beyond); FILE does the same on a
                       UTF-8 text file; none rounds as llama.cpp's reference quantizer, byte for byte
  -h, --help           this text

Norms and other 1-D tensors stay F32, as llama.cpp keeps them. A matrix whose rows are not whole blocks of the
type is not refused: q4_k falls back to q4_0 and q6_k to q8_0 (the 32-block type of at least as many bits per
weight) when its rows are a multiple of 32, and it stays F32 otherwise, so every model can be quantized; the
summary line counts the tensors of each type.`;

const SPEC: FlagSpec = {
  type: { type: 'string' },
  tokenizer: { type: 'string' },
  pure: { type: 'boolean' },
  calibration: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const TYPES: Readonly<Record<string, Exclude<GgufWeightType, 'F32'>>> = {
  q8_0: 'Q8_0',
  q4_0: 'Q4_0',
  q4_k: 'Q4_K',
  q6_k: 'Q6_K',
};

function calibrationOf(text: string | undefined): Calibration {
  if (text === undefined || text === 'auto') return { kind: 'auto' };
  if (text === 'none') return { kind: 'none' };
  if (text === '') throw new UsageError('--calibration: expected auto, none or a text file, got ""');
  return { kind: 'file', path: text };
}

/** Parses the arguments after `loom quantize`. */
export function parseQuantizeArgs(argv: readonly string[]): QuantizeCommand {
  const flags = readFlags(argv, SPEC, 2);
  if (flags.switches.has('help')) return { kind: 'help' };
  const [input, output] = flags.positionals;
  if (input === undefined || output === undefined) {
    throw new UsageError('expected IN and OUT.gguf, the model to read and the GGUF file to write');
  }
  if (!output.endsWith('.gguf')) throw new UsageError(`OUT: ${JSON.stringify(output)} must end in .gguf`);
  const text = flags.values.get('type');
  if (text === undefined) throw new UsageError('--type: required; give q8_0, q4_0, q4_k or q6_k');
  const type = TYPES[text.toLowerCase()];
  if (type === undefined) {
    throw new UsageError(`--type: expected q8_0, q4_0, q4_k or q6_k, got ${JSON.stringify(text)}`);
  }
  return {
    kind: 'quantize',
    input,
    output,
    type,
    tokenizer: flags.values.get('tokenizer'),
    pure: flags.switches.has('pure'),
    calibration: calibrationOf(flags.values.get('calibration')),
  };
}
