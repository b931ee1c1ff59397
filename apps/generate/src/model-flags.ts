import type { ParseArgsConfig } from 'node:util';

/**
 * The flags of every command that runs a model on text — `generate` and `chat` — in `util.parseArgs`'s form, with
 * llama.cpp's short aliases: the model and its tokenizer, the context, the sampler and where it runs.
 */
export const MODEL_FLAGS = {
  model: { type: 'string', short: 'm' },
  tokenizer: { type: 'string' },
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
