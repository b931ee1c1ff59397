import { basename } from 'node:path';
import { type LoadedModel, loadModelFile, transformerFromTensors } from '@loom/models';
import type { MemoryLimits } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import type { BackendName } from './args';
import { createBackend } from './backend';
import { existingUserPath, readUserFile, tokenizerBeside } from './paths';
import { readTokenizerFile } from './tokenizer-file';

export type { BackendName };

/** The flags that say which model to run, and where (`loom generate`, `loom chat`). */
export interface ModelFlags {
  readonly model: string;
  readonly tokenizer: string | undefined;
  readonly backend: BackendName;
  /** CPU kernel threads; undefined leaves the backend's default. */
  readonly threads: number | undefined;
}

/** A model on its backend with its tokenizer, and what it was loaded from. */
export interface OpenedModel {
  /** The absolute path of --model. */
  readonly modelPath: string;
  readonly loaded: LoadedModel;
  readonly model: ReturnType<typeof transformerFromTensors>;
  readonly tokenizer: Tokenizer;
  /** The memory a KV cache may take on the backend. */
  readonly limits: MemoryLimits;
}

/**
 * --tokenizer, else the model's own (a checkpoint's or GGUF vocabulary), else a tokenizer.json / tokenizer.bin beside
 * the model; undefined when there is none of these.
 */
export function findTokenizer(
  flags: Pick<ModelFlags, 'model' | 'tokenizer'>,
  modelPath: string,
  modelTokenizerJson: string | undefined,
  env: NodeJS.ProcessEnv,
): Tokenizer | undefined {
  if (flags.tokenizer !== undefined) {
    return readTokenizerFile('--tokenizer', flags.tokenizer, env).tokenizer;
  }
  if (modelTokenizerJson !== undefined) {
    return loadTokenizer(new TextEncoder().encode(modelTokenizerJson), `${flags.model} (tokenizer.json)`);
  }
  const beside = tokenizerBeside(modelPath);
  return beside === undefined
    ? undefined
    : loadTokenizer(readUserFile('--tokenizer', beside, env), basename(beside));
}

/** Loads --model and its tokenizer (relative paths against INIT_CWD) onto the --backend; dispose `model` when done. */
export async function openModel(flags: ModelFlags, env: NodeJS.ProcessEnv): Promise<OpenedModel> {
  const modelPath = existingUserPath('--model', flags.model, env);
  const loaded = loadModelFile(modelPath);
  const tokenizer = findTokenizer(flags, modelPath, loaded.tokenizerJson, env);
  if (tokenizer === undefined) {
    throw new Error(
      `--tokenizer: not given, and there is no tokenizer.json or tokenizer.bin beside ${flags.model}; ` +
        'pass --tokenizer PATH (stories260K.bin uses tok512.bin)',
    );
  }
  const { backend, limits } = await createBackend(flags.backend, { threads: flags.threads });
  setBackend(backend);
  const model = transformerFromTensors(loaded, flags.model);
  return { modelPath, loaded, model, tokenizer, limits };
}
