import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  CHECKPOINT_FILES,
  isMambaConfig,
  isMambaConfigJson,
  loadAnyCheckpoint,
  mambaFromTensors,
  readRegularFile,
} from '@loom/models';
import { setBackend } from '@loom/tensor';
import type { Tokenizer } from '@loom/tokenizer';
import { createBackend } from './backend';
import { findTokenizer, type ModelFlags } from './open-model';

/** A config.json larger than this is not a Mamba checkpoint's (it holds a few sizes and a manifest). */
const MAX_CONFIG_BYTES = 1 << 20;

/** A Mamba model on its backend with its tokenizer; dispose `model` when done. */
export interface OpenedMamba {
  readonly model: ReturnType<typeof mambaFromTensors>;
  readonly tokenizer: Tokenizer;
}

/**
 * The checkpoint directory `modelPath` names (the directory, or its model.safetensors) when its config.json is a
 * Loom Mamba checkpoint's; undefined for anything else, which the transformer loader then reads (and reports).
 */
export function mambaCheckpointDir(modelPath: string): string | undefined {
  const isDir = statSync(modelPath).isDirectory();
  if (!isDir && basename(modelPath) !== CHECKPOINT_FILES.model) return undefined;
  const dir = isDir ? modelPath : dirname(modelPath);
  let json: unknown;
  try {
    const bytes = readRegularFile(
      join(dir, CHECKPOINT_FILES.config),
      'a model config.json',
      MAX_CONFIG_BYTES,
    );
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined; // no readable config.json: not a Mamba checkpoint; the transformer loader explains why
  }
  return isMambaConfigJson(json) ? dir : undefined;
}

/** Loads the Mamba checkpoint in `dir` (checked file by file) and its tokenizer onto the --backend. */
export async function openMamba(
  flags: ModelFlags,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<OpenedMamba> {
  const checkpoint = loadAnyCheckpoint(dir);
  const { config } = checkpoint;
  if (!isMambaConfig(config)) throw new Error(`${dir}: its config.json no longer describes a Mamba model`);
  const tokenizer = findTokenizer(flags, dir, checkpoint.tokenizerJson, env);
  if (tokenizer === undefined) {
    throw new Error(
      `--tokenizer: not given, and the Mamba checkpoint ${flags.model} has no tokenizer.json; pass --tokenizer PATH`,
    );
  }
  const { backend } = await createBackend(flags.backend, { threads: flags.threads });
  setBackend(backend);
  return { model: mambaFromTensors({ config, tensors: checkpoint.tensors }, flags.model), tokenizer };
}
