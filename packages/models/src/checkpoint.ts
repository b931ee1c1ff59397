import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { commitFile, discardFile, type StagedFile, stageFile, syncDirectory } from './atomic-write';
import { formatBytes } from './bytes';
import type { CheckpointConfig, ModelConfig } from './config';
import { statRegularFile, withFileSource } from './file-source';
import { readSafetensorsFile } from './files';
import { checkFiniteWeights } from './finite';
import { readJsonFile } from './json-file';
import {
  type FileRecord,
  type LoomConfigJson,
  loomConfigJsonText,
  parseCheckpointConfigJson,
  parseLoomConfigJson,
} from './loom-config';
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
  /** A transformer's config, or a Mamba model's (`arch: 'mamba'`). */
  config: CheckpointConfig;
  tensors: readonly NamedTensor[];
  /** The tokenizer's JSON text, stored as `tokenizer.json`. */
  tokenizerJson?: string;
  extra?: CheckpointExtra;
}

/** A loaded checkpoint: a transformer's unless `C` says otherwise (`loadAnyCheckpoint`). */
export interface Checkpoint<C extends CheckpointConfig = ModelConfig> {
  config: C;
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

/** Bytes hashed per read while verifying a file. */
const HASH_CHUNK_BYTES = 16 << 20;
/** Text files of a checkpoint (tokenizer, trainer state) larger than this are refused. */
const MAX_TEXT_BYTES = 512 << 20;

/**
 * The path of a file the manifest lists, after checking that it stays inside the checkpoint:
 * only the file names a checkpoint has, never a path, and no symlink out of the directory.
 */
function manifestPath(dir: string, name: string, configPath: string): string {
  const known: readonly string[] = Object.values(CHECKPOINT_FILES).filter(
    (file) => file !== CHECKPOINT_FILES.config,
  );
  if (!known.includes(name)) {
    throw new Error(
      `${configPath}: its "files" manifest lists ${JSON.stringify(name)}; a checkpoint holds only ${known.join(', ')} — the config is corrupt or was tampered with`,
    );
  }
  const path = join(dir, name);
  if (existsSync(path)) {
    const inside = relative(realpathSync(dir), realpathSync(path));
    if (inside !== name) {
      throw new Error(
        `${path}: resolves outside the checkpoint directory ${dir} (a symlink); refusing to read it`,
      );
    }
  }
  return path;
}

/** Checks a listed file's size (before reading) and SHA-256 (streamed) against its record. */
function verifyFile(path: string, record: FileRecord): void {
  if (!existsSync(path)) {
    throw new Error(
      `${path}: missing; ${CHECKPOINT_FILES.config} beside it lists it (${formatBytes(record.bytes)}) — the checkpoint is incomplete`,
    );
  }
  const { size } = statRegularFile(path, 'a checkpoint file');
  const fail = (problem: string) =>
    new Error(
      `${path}: ${problem} (recorded in ${CHECKPOINT_FILES.config}) — the file is corrupt or truncated, or a save was interrupted; use an earlier checkpoint`,
    );
  if (size !== record.bytes) throw fail(`expected ${formatBytes(record.bytes)} but the file holds ${size}`);
  const digest = withFileSource(path, 'a checkpoint file', (file) => {
    const hash = createHash('sha256');
    for (let at = 0; at < file.size; at += HASH_CHUNK_BYTES) {
      hash.update(new Uint8Array(file.read(at, Math.min(file.size, at + HASH_CHUNK_BYTES))));
    }
    return hash.digest('hex');
  });
  if (digest !== record.sha256)
    throw fail(`expected SHA-256 ${record.sha256} but the contents hash to ${digest}`);
}

function readText(path: string): string {
  const { size } = statRegularFile(path, 'a checkpoint file');
  if (size > MAX_TEXT_BYTES)
    throw new Error(`${path}: ${size} bytes is too large (at most ${MAX_TEXT_BYTES})`);
  return readFileSync(path, 'utf8');
}

/**
 * Loads a transformer's Loom checkpoint directory: reads config.json, checks every file it lists against the
 * recorded size and SHA-256 (all of them before parsing any), and validates the model tensors against the config.
 * A Mamba checkpoint is refused by name (`loadAnyCheckpoint` reads it).
 */
export function loadCheckpoint(dir: string): Checkpoint {
  return loadWith(dir, parseLoomConfigJson);
}

/**
 * Loads a Loom checkpoint directory of either architecture, as `loadCheckpoint` does; tell the two apart with
 * `isMambaConfig(checkpoint.config)`.
 */
export function loadAnyCheckpoint(dir: string): Checkpoint<CheckpointConfig> {
  return loadWith(dir, parseCheckpointConfigJson);
}

function loadWith<C extends CheckpointConfig>(
  dir: string,
  parse: (json: unknown, source: string) => LoomConfigJson<C>,
): Checkpoint<C> {
  const configPath = join(dir, CHECKPOINT_FILES.config);
  if (!existsSync(configPath)) {
    throw new Error(
      `${configPath}: missing; a Loom checkpoint directory has a config.json beside model.safetensors`,
    );
  }
  const { config, files } = parse(readJsonFile(configPath, 'a checkpoint config.json'), configPath);
  const listed = new Map(
    Object.entries(files).map(([name, record]) => [
      name,
      { path: manifestPath(dir, name, configPath), record },
    ]),
  );
  for (const { path, record } of listed.values()) verifyFile(path, record);
  const pathOf = (name: string) => listed.get(name)?.path;
  const modelPath = pathOf(CHECKPOINT_FILES.model);
  if (modelPath === undefined) {
    throw new Error(
      `${configPath}: its "files" manifest does not list ${CHECKPOINT_FILES.model}; the config is corrupt`,
    );
  }
  const tensors = validateTensors(config, readSafetensorsFile(modelPath).tensors, modelPath);
  checkFiniteWeights(tensors, modelPath);
  const checkpoint: Checkpoint<C> = { config, tensors };
  const tokenizerPath = pathOf(CHECKPOINT_FILES.tokenizer);
  if (tokenizerPath !== undefined) checkpoint.tokenizerJson = readText(tokenizerPath);
  const trainerTensors = pathOf(CHECKPOINT_FILES.trainerTensors);
  const trainerJson = pathOf(CHECKPOINT_FILES.trainerJson);
  if (trainerTensors !== undefined || trainerJson !== undefined) {
    checkpoint.extra = {};
    if (trainerTensors !== undefined) checkpoint.extra.tensors = readSafetensorsFile(trainerTensors).tensors;
    if (trainerJson !== undefined) checkpoint.extra.json = readText(trainerJson);
  }
  return checkpoint;
}
