import { existsSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { CpuBackend } from '@loom/backend-cpu';
import { type LoadedModel, loadModelFile, readRegularFile, transformerFromTensors } from '@loom/models';
import type { TransformerLM } from '@loom/nn';
import type { MemoryLimits } from '@loom/runtime';
import { type Backend, setBackend } from '@loom/tensor';
import { type ChatTemplateName, loadTokenizer, type Tokenizer } from '@loom/tokenizer';
import type { BackendName, ServeCommand } from './args';

/** A model ready to serve. */
export interface ServedModel {
  /** The name clients pass as `model`: the model file's name. */
  readonly id: string;
  readonly model: TransformerLM;
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplateName;
  /** Memory the key/value caches may take. */
  readonly limits: MemoryLimits;
}

/** pnpm runs the script inside the app; user paths are relative to where pnpm was started (INIT_CWD). */
function userPath(flag: string, path: string, env: NodeJS.ProcessEnv): string {
  const absolute = resolve(env.INIT_CWD ?? process.cwd(), path);
  if (!existsSync(absolute))
    throw new Error(`${flag} ${path} (${absolute}): no such file or directory; check the path`);
  return absolute;
}

/** Tokenizer files looked for beside a model, in this order. */
const TOKENIZER_NAMES = ['tokenizer.json', 'tokenizer.bin'];

function openTokenizer(
  command: ServeCommand,
  modelPath: string,
  loaded: LoadedModel,
  env: NodeJS.ProcessEnv,
): Tokenizer {
  if (command.tokenizer !== undefined) {
    const path = userPath('--tokenizer', command.tokenizer, env);
    return loadTokenizer(readRegularFile(path, 'a tokenizer file'), basename(path));
  }
  if (loaded.tokenizerJson !== undefined) {
    return loadTokenizer(new TextEncoder().encode(loaded.tokenizerJson), `${command.model} (tokenizer.json)`);
  }
  const dir = statSync(modelPath).isDirectory() ? modelPath : dirname(modelPath);
  const beside = TOKENIZER_NAMES.map((name) => join(dir, name)).find((path) => existsSync(path));
  if (beside === undefined) {
    throw new Error(
      `--tokenizer: not given, and there is no tokenizer.json or tokenizer.bin beside ${command.model}; ` +
        'pass --tokenizer PATH (stories260K.bin uses tok512.bin)',
    );
  }
  return loadTokenizer(readRegularFile(beside, 'a tokenizer file'), basename(beside));
}

/** The chat format: the one asked for, else chatml when the tokenizer has its tokens, else plain. */
export function chooseTemplate(tokenizer: Tokenizer, asked: ChatTemplateName | undefined): ChatTemplateName {
  if (asked !== undefined) return asked;
  const chatml = ['<|im_start|>', '<|im_end|>'].every((text) => tokenizer.specialTokenId(text) !== undefined);
  return chatml ? 'chatml' : 'plain';
}

/** The backend of that name and the memory a cache may take on it; WebGPU is loaded only when asked for. */
async function openBackend(name: BackendName): Promise<{ backend: Backend; limits: MemoryLimits }> {
  if (name === 'cpu') return { backend: new CpuBackend(), limits: { totalBytes: totalmem() } };
  const { requireNodeWebGPU } = await import('@loom/webgpu-node');
  const backend = await requireNodeWebGPU();
  const { maxBufferSize, maxStorageBufferBindingSize } = backend.limits;
  return { backend, limits: { tensorBytes: Math.min(maxBufferSize, maxStorageBufferBindingSize) } };
}

/** Loads the model and tokenizer a command names, on its backend (made the current one). */
export async function loadServedModel(command: ServeCommand, env: NodeJS.ProcessEnv): Promise<ServedModel> {
  const modelPath = userPath('--model', command.model, env);
  const loaded = loadModelFile(modelPath);
  const tokenizer = openTokenizer(command, modelPath, loaded, env);
  const { backend, limits } = await openBackend(command.backend);
  setBackend(backend);
  const model = transformerFromTensors(loaded, command.model);
  if (tokenizer.vocabSize !== model.config.vocabSize) {
    model.dispose();
    throw new Error(
      `the tokenizer has ${tokenizer.vocabSize} tokens but ${command.model} has a vocabulary of ${model.config.vocabSize}; ` +
        'pass the --tokenizer the model was trained with',
    );
  }
  const template = chooseTemplate(tokenizer, command.chatTemplate);
  return { id: basename(modelPath), model, tokenizer, template, limits };
}
