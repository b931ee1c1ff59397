import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LoadedModel } from '@loom/models';
import type { MemoryLimitError } from '@loom/runtime';
import { type Command, UsageError } from './args';

type GenerateCommand = Extract<Command, { kind: 'generate' }>;

/** Where a model file states its maximum context: the file and the key. */
export interface MaxSeqLenSource {
  readonly file: string;
  readonly key: string;
}

/** The file and key a loaded model's maxSeqLen came from (`modelPath` is the absolute path given to --model). */
export function maxSeqLenSource(
  loaded: Pick<LoadedModel, 'format' | 'config'>,
  modelPath: string,
): MaxSeqLenSource {
  if (loaded.format === 'llama2c') return { file: modelPath, key: 'seq_len (the header’s 7th int32)' };
  if (loaded.format === 'gguf') return { file: modelPath, key: 'llama.context_length' };
  const dir = existsSync(modelPath) && statSync(modelPath).isDirectory() ? modelPath : dirname(modelPath);
  const file = join(dir, 'config.json');
  if (loaded.format === 'loom') return { file, key: 'maxSeqLen' };
  return { file, key: loaded.config.preset === 'llama' ? 'max_position_embeddings' : 'n_positions' };
}

/**
 * The positions the KV cache gets: `--context` (at most the model's maxSeqLen, a usage error otherwise), or the
 * prompt plus --max-tokens, at most the maxSeqLen.
 */
export function contextFor(
  command: GenerateCommand,
  promptTokens: number,
  maxSeqLen: number,
  source: MaxSeqLenSource,
): number {
  if (command.context === undefined) return Math.min(maxSeqLen, promptTokens + command.maxTokens);
  if (command.context > maxSeqLen) {
    throw new UsageError(
      `--context: expected at most ${maxSeqLen}, the model's ${source.key} in ${source.file}, got ${command.context}`,
    );
  }
  return command.context;
}

/** A refused KV cache explained in the CLI's terms: the file and key (or flag) that asked for it, and the bytes. */
export function contextTooLarge(
  error: MemoryLimitError,
  command: GenerateCommand,
  promptTokens: number,
  maxSeqLen: number,
  source: MaxSeqLenSource,
): Error {
  const limit =
    error.limit === 'totalBytes' ? "this machine's memory" : "the WebGPU adapter's largest buffer";
  const reason = `${error.reason}, ${limit}`;
  const tokens = `${promptTokens} token${promptTokens === 1 ? '' : 's'}`;
  const asked = `the prompt (${tokens}) plus --max-tokens ${command.maxTokens}`;
  if (command.context !== undefined) {
    return new Error(`${command.model}: --context ${command.context}: ${reason}; pass a smaller --context`);
  }
  if (promptTokens + command.maxTokens >= maxSeqLen) {
    return new Error(
      `${source.file}: ${source.key} is ${maxSeqLen}, and ${asked} asks for all of it: ${reason}; ` +
        'pass a smaller --max-tokens or --context',
    );
  }
  return new Error(
    `${command.model}: ${asked} make a context of ${promptTokens + command.maxTokens} positions: ` +
      `${reason}; pass a smaller --max-tokens`,
  );
}
