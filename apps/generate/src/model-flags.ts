import type { ParseArgsConfig } from 'node:util';
import type { WeightsMode } from '@loom/models';

/**
 * The flags of every command that runs a model on text — `generate` and `chat` — in `util.parseArgs`'s form, with
 * llama.cpp's short aliases: the model and its tokenizer, how its weights are held, the context, the sampler and
 * where it runs.
 */
export const MODEL_FLAGS = {
  model: { type: 'string', short: 'm' },
  tokenizer: { type: 'string' },
  weights: { type: 'string' },
  'max-tokens': { type: 'string', short: 'n' },
  context: { type: 'string', short: 'c' },
  'no-context-shift': { type: 'boolean' },
  temperature: { type: 'string' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  'min-p': { type: 'string' },
  'repetition-penalty': { type: 'string' },
  seed: { type: 'string', short: 's' },
  threads: { type: 'string', short: 't' },
  backend: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/**
 * The values of `--weights` (generate, chat, perplexity, serve), the default first: `quantized` keeps the blocks
 * the file stores (a GGUF file's Q8_0 / Q4_0 / Q4_K linear layers), whose products then read them; `f32` widens
 * every weight to float32 (to compare against, or where a kernel lacks a quantized form).
 */
export const WEIGHTS_MODES: readonly WeightsMode[] = ['quantized', 'f32'];

/** `--weights` when it is not given: keep what the file stores, as llama.cpp runs it. */
export const DEFAULT_WEIGHTS: WeightsMode = 'quantized';
