import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { headOf } from './byte-source';
import { CHECKPOINT_FILES, loadCheckpoint } from './checkpoint';
import { DETECT_BYTES, detectModelFormat } from './detect';
import { withFileSource } from './file-source';
import type { LoadOptions } from './gguf/quantized';
import { readJsonFile } from './json-file';
import { isLoomConfigJson } from './loom-config';
import { type LoadedModel, readModel } from './parse-model';
import { loadShardedSafetensors, SHARD_INDEX } from './sharded';

function loadLoomDirectory(dir: string): LoadedModel {
  const checkpoint = loadCheckpoint(dir);
  const loaded: LoadedModel = { format: 'loom', config: checkpoint.config, tensors: checkpoint.tensors };
  if (checkpoint.tokenizerJson !== undefined) loaded.tokenizerJson = checkpoint.tokenizerJson;
  return loaded;
}
function readConfigBeside(path: string): unknown {
  const configPath = join(dirname(path), CHECKPOINT_FILES.config);
  if (!existsSync(configPath)) {
    throw new Error(
      `${path}: a safetensors file says nothing about the architecture; expected a config.json beside it (Hugging Face or Loom) but ${configPath} does not exist`,
    );
  }
  return readJsonFile(configPath, 'a model config.json');
}

/** A directory's single weights file, or undefined when it holds a sharded checkpoint's index instead. */
function weightsInDirectory(dir: string): string | undefined {
  const model = join(dir, CHECKPOINT_FILES.model);
  if (existsSync(model)) return model;
  if (existsSync(join(dir, SHARD_INDEX))) return undefined;
  throw new Error(
    `${dir}: a model directory must hold ${CHECKPOINT_FILES.model} (or a sharded checkpoint's ${SHARD_INDEX}) beside a config.json; it does not`,
  );
}

/**
 * Loads a model from a weights file or a directory, recognising the format from the content: a llama2.c `.bin`;
 * a safetensors file with a Hugging Face (Llama, GPT-2) config.json beside it, or a sharded one (its directory or its
 * model.safetensors.index.json); a GGUF file; or a Loom checkpoint (its directory
 * or its model.safetensors), whose files are checked against their recorded sizes and hashes. Only regular files
 * are read; headers are checked against the file size before any tensor is read, tensors are read one at a time
 * by position (no whole-file buffer, no 2 GiB limit), validated against the config, and checked to be finite.
 * `options.weights: 'quantized'` keeps a GGUF file's Q8_0 / Q4_0 / Q4_K / Q6_K linear-layer blocks as well, and a
 * BF16 / F16 safetensors file's linear weights at 16 bits (see WeightsMode).
 */
export function loadModelFile(path: string, options: LoadOptions = {}): LoadedModel {
  if (!existsSync(path)) throw new Error(`${path}: no such file or directory`);
  if (statSync(path).isDirectory()) {
    const configPath = join(path, CHECKPOINT_FILES.config);
    if (existsSync(configPath) && isLoomConfigJson(readJsonFile(configPath, 'a model config.json'))) {
      return loadLoomDirectory(path);
    }
    const weights = weightsInDirectory(path);
    return weights === undefined ? loadShardedSafetensors(path) : loadModelFile(weights, options);
  }
  if (basename(path) === SHARD_INDEX) return loadShardedSafetensors(dirname(path));
  return withFileSource(path, 'a model file', (file) => {
    if (detectModelFormat(headOf(file, DETECT_BYTES)) !== 'safetensors')
      return readModel(file, undefined, options);
    const configJson = readConfigBeside(path);
    if (!isLoomConfigJson(configJson)) return readModel(file, configJson, options);
    if (basename(path) !== CHECKPOINT_FILES.model) {
      throw new Error(
        `${path}: sits in a Loom checkpoint directory, whose weights are ${CHECKPOINT_FILES.model}; pass the directory ${dirname(path)}`,
      );
    }
    return loadLoomDirectory(dirname(path));
  });
}
