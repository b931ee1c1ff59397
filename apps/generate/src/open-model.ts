import { basename } from 'node:path';
import { type LoadedModel, loadModelFile, transformerFromTensors, type WeightsMode } from '@loom/models';
import type { MemoryLimits } from '@loom/runtime';
import { setBackend } from '@loom/tensor';
import { loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import type { BackendName } from './args';
import { createBackend } from './backend';
import { type HeldWeights, heldWeights } from './held-weights';
import { existingUserPath, readUserFile, tokenizerBeside } from './paths';
import { readTokenizerFile } from './tokenizer-file';

export { describeHeldWeights, type HeldWeights } from './held-weights';
export type { BackendName };

/** The flags that say which model to run, and where (`loom generate`, `loom chat`). */
export interface ModelFlags {
  readonly model: string;
  readonly tokenizer: string | undefined;
  readonly backend: BackendName;
  /** CPU kernel threads; undefined leaves the backend's default. */
  readonly threads: number | undefined;
  /** `quantized` keeps a file's Q8_0 / Q4_0 / Q4_K linear weights as blocks; `f32` widens them (--weights). */
  readonly weights: WeightsMode;
}

/** A model on its backend with its tokenizer, and what it was loaded from. */
export interface OpenedModel {
  /** The absolute path of --model. */
  readonly modelPath: string;
  /** The file's format and config; not its tensors, which are freed once on the backend. */
  readonly loaded: Pick<LoadedModel, 'format' | 'config'>;
  readonly model: ReturnType<typeof transformerFromTensors>;
  readonly tokenizer: Tokenizer;
  /** What the layers read, and the bytes the weights take. */
  readonly weights: HeldWeights;
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

/**
 * Loads --model and its tokenizer (relative paths against INIT_CWD) onto the --backend, its weights as --weights
 * says (the whole loaded file goes to transformerFromTensors, which hands kept blocks to the layers); dispose
 * `model` when done.
 */
export async function openModel(flags: ModelFlags, env: NodeJS.ProcessEnv): Promise<OpenedModel> {
  const modelPath = existingUserPath('--model', flags.model, env);
  const loaded = loadModelFile(modelPath, { weights: flags.weights });
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
  const { format, config } = loaded;
  return {
    modelPath,
    loaded: { format, config },
    model,
    tokenizer,
    limits,
    weights: heldWeights(model, flags.weights),
  };
}
