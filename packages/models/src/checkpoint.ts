import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { commitFile, discardFile, type StagedFile, stageFile, syncDirectory } from './atomic-write';
import { formatBytes } from './bytes';
import type { ModelConfig } from './config';
import { parseJson } from './json';
import { type FileRecord, loomConfigJsonText, parseLoomConfigJson } from './loom-config';
import { parseSafetensors } from './safetensors/read';
import { serializeSafetensors } from './safetensors/write';
import type { NamedTensor, StoredTensor } from './tensor';
import { validateTensors } from './validate';

/** The files of a Loom checkpoint directory. */
export const CHECKPOINT_FILES = {
  model: 'model.safetensors',
  config: 'config.json',
  tokenizer: 'tokenizer.json',
  trainerTensors: 'trainer-state.safetensors',
  trainerJson: 'trainer-state.json',
} as const;

/** Trainer state saved beside the model; opaque to this package. */
export interface CheckpointExtra {
  /** Optimizer moments, RNG state and the like (`trainer-state.safetensors`). */
  tensors?: readonly StoredTensor[];
  /** Any JSON text (`trainer-state.json`). */
  json?: string;
}

export interface CheckpointInput {
  config: ModelConfig;
  tensors: readonly NamedTensor[];
  /** The tokenizer's JSON text, stored as `tokenizer.json`. */
  tokenizerJson?: string;
  extra?: CheckpointExtra;
}

export interface Checkpoint {
  config: ModelConfig;
  /** In canonical order (`expectedTensors(config)`). */
  tensors: NamedTensor[];
  tokenizerJson?: string;
  extra?: { tensors?: StoredTensor[]; json?: string };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/**
 * Saves a Loom checkpoint directory (created if needed): `model.safetensors`, `config.json` (the ModelConfig with
 * `"format": "loom"`, a version and a manifest of every other file's size and SHA-256), and when given
 * `tokenizer.json`, `trainer-state.safetensors` and `trainer-state.json`.
 *
 * Order: the tensors are validated against the config; every file is written and flushed under a temporary name
 * (an error here removes them and leaves the old checkpoint as it was); then they are renamed into place —
 * trainer state, tokenizer, model, and `config.json` last, the commit point; optional files of an older save that
 * this one lacks are removed after that. A crash during the renames can leave new files beside the old
 * config.json, whose manifest then no longer matches: `loadCheckpoint` refuses such a directory by name.
 */
export function saveCheckpoint(dir: string, checkpoint: CheckpointInput): void {
  const tensors = validateTensors(checkpoint.config, checkpoint.tensors, join(dir, CHECKPOINT_FILES.model));
  const contents: [name: string, bytes: Uint8Array][] = [];
  if (checkpoint.extra?.tensors !== undefined) {
    contents.push([CHECKPOINT_FILES.trainerTensors, serializeSafetensors(checkpoint.extra.tensors)]);
  }
  if (checkpoint.extra?.json !== undefined)
    contents.push([CHECKPOINT_FILES.trainerJson, utf8(checkpoint.extra.json)]);
  if (checkpoint.tokenizerJson !== undefined) {
    contents.push([CHECKPOINT_FILES.tokenizer, utf8(checkpoint.tokenizerJson)]);
  }
  contents.push([CHECKPOINT_FILES.model, serializeSafetensors(tensors)]);
  const files: Record<string, FileRecord> = {};
  for (const [name, bytes] of contents) files[name] = { bytes: bytes.length, sha256: sha256(bytes) };
  contents.push([CHECKPOINT_FILES.config, utf8(loomConfigJsonText({ config: checkpoint.config, files }))]);

  mkdirSync(dir, { recursive: true });
  const staged: StagedFile[] = [];
  try {
    for (const [name, bytes] of contents) staged.push(stageFile(join(dir, name), bytes));
  } catch (error) {
    staged.forEach(discardFile);
    throw error;
  }
  let committed = 0;
  try {
    for (const file of staged) {
      commitFile(file);
      committed++;
    }
  } catch (error) {
    staged.slice(committed).forEach(discardFile);
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${dir}: saving the checkpoint failed while renaming its files into place (${reason}); the directory now mixes old and new files, which loadCheckpoint refuses — save again`,
      { cause: error },
    );
  }
  const optional = [
    CHECKPOINT_FILES.tokenizer,
    CHECKPOINT_FILES.trainerTensors,
    CHECKPOINT_FILES.trainerJson,
  ];
  for (const name of optional) {
    if (files[name] === undefined) rmSync(join(dir, name), { force: true });
  }
  syncDirectory(dir);
}

function readChecked(dir: string, name: string, record: FileRecord): Uint8Array {
  const path = join(dir, name);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new Error(
      `${path}: missing or not a file; ${join(dir, CHECKPOINT_FILES.config)} lists it (${formatBytes(record.bytes)}) — the checkpoint is incomplete`,
    );
  }
  const bytes = readFileSync(path);
  const problem =
    bytes.length !== record.bytes
      ? `expected ${formatBytes(record.bytes)} but the file holds ${bytes.length}`
      : sha256(bytes) !== record.sha256
        ? `expected SHA-256 ${record.sha256} but the contents hash to ${sha256(bytes)}`
        : '';
  if (problem !== '') {
    throw new Error(
      `${path}: ${problem} (recorded in ${CHECKPOINT_FILES.config}) — the file is corrupt or truncated, or a save was interrupted; use an earlier checkpoint`,
    );
  }
  return bytes;
}

/**
 * Loads a Loom checkpoint directory: reads config.json, checks every file it lists against the recorded size and
 * SHA-256 (all of them before parsing any), and validates the model tensors against the config.
 */
export function loadCheckpoint(dir: string): Checkpoint {
  const configPath = join(dir, CHECKPOINT_FILES.config);
  if (!existsSync(configPath)) {
    throw new Error(
      `${configPath}: missing; a Loom checkpoint directory has a config.json beside model.safetensors`,
    );
  }
  const { config, files } = parseLoomConfigJson(
    parseJson(readFileSync(configPath, 'utf8'), configPath),
    configPath,
  );
  const verified = new Map(
    Object.entries(files).map(([name, record]) => [name, readChecked(dir, name, record)]),
  );
  const read = (name: string) => verified.get(name);
  const text = (bytes: Uint8Array | undefined) =>
    bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  const modelPath = join(dir, CHECKPOINT_FILES.model);
  const model = read(CHECKPOINT_FILES.model);
  if (model === undefined) {
    throw new Error(
      `${configPath}: its "files" manifest does not list ${CHECKPOINT_FILES.model}; the config is corrupt`,
    );
  }
  const checkpoint: Checkpoint = {
    config,
    tensors: validateTensors(config, parseSafetensors(model, modelPath).tensors, modelPath),
  };
  const tokenizerJson = text(read(CHECKPOINT_FILES.tokenizer));
  if (tokenizerJson !== undefined) checkpoint.tokenizerJson = tokenizerJson;
  const trainerTensors = read(CHECKPOINT_FILES.trainerTensors);
  const trainerJson = text(read(CHECKPOINT_FILES.trainerJson));
  if (trainerTensors !== undefined || trainerJson !== undefined) {
    checkpoint.extra = {};
    if (trainerTensors !== undefined) {
      checkpoint.extra.tensors = parseSafetensors(
        trainerTensors,
        join(dir, CHECKPOINT_FILES.trainerTensors),
      ).tensors;
    }
    if (trainerJson !== undefined) checkpoint.extra.json = trainerJson;
  }
  return checkpoint;
}
