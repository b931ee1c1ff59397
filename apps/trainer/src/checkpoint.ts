import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHECKPOINT_FILES,
  type CheckpointConfig,
  loadAnyCheckpoint,
  type NamedTensor,
  type StoredTensor,
  saveCheckpoint,
} from '@loom/models';
import type { Optimizer } from '@loom/nn';
import { type Tokenizer, tokenizerFromJSON } from '@loom/tokenizer';
import type { ArchModel } from './arch/architecture';
import { parseTrainerState, type TrainerState, trainerStateJson } from './trainer-state';

/** Optimizer state tensors are stored as `optimizer.<name>` (AdamW: `optimizer.m.0`, `optimizer.v.0`, ...). */
const OPTIMIZER_PREFIX = 'optimizer.';

/** Parameters outside the config's model (an encoder's classifier) are stored as `head.<name>`. */
const HEAD_PREFIX = 'head.';

/** A run as saved in a checkpoint directory. */
export interface SavedRun {
  /** The model's config: a transformer's, or a Mamba model's. */
  readonly config: CheckpointConfig;
  readonly weights: readonly NamedTensor[];
  /** Parameters beyond those of `config` (heads), by their model names. */
  readonly heads: readonly NamedTensor[];
  readonly tokenizer: Tokenizer;
  /** Optimizer state by the optimizer's own names. */
  readonly optimizer: ReadonlyMap<string, NamedTensor>;
  readonly state: TrainerState;
}

export interface RunToSave {
  readonly model: ArchModel;
  readonly optimizer: Optimizer;
  readonly tokenizer: Tokenizer;
  readonly state: TrainerState;
}

/**
 * Saves weights (`model.safetensors`), `config.json`, `tokenizer.json`, the optimizer state and any
 * head weights (`trainer-state.safetensors`) and `trainer-state.json` through @loom/models, which writes
 * every file under a temporary name, renames them into place with config.json (holding every
 * file's size and SHA-256) last, so a crash never leaves a checkpoint that loads wrongly.
 */
export async function saveRun(dir: string, run: RunToSave): Promise<void> {
  const optimizer: StoredTensor[] = [];
  for (const [name, t] of run.optimizer.state()) {
    if (t.dtype !== 'f32') throw new Error(`saveRun: optimizer state ${name} is not float32`);
    optimizer.push({ name: OPTIMIZER_PREFIX + name, shape: [...t.shape], data: await t.float32Data() });
  }
  const { body, heads } = await run.model.tensors();
  saveCheckpoint(dir, {
    config: run.model.config,
    tensors: body,
    tokenizerJson: JSON.stringify(run.tokenizer.toJSON()),
    extra: {
      tensors: [...optimizer, ...heads.map((t) => ({ ...t, name: HEAD_PREFIX + t.name }))],
      json: trainerStateJson(run.state),
    },
  });
}

/** Loads a checkpoint saved by `saveRun`, refusing with a clear message anything incomplete or corrupt. */
export function loadRun(dir: string): SavedRun {
  const fail = (reason: string): never => {
    throw new Error(`--resume ${dir}: cannot resume: ${reason}`);
  };
  if (!existsSync(dir)) fail('no such directory');
  let checkpoint: ReturnType<typeof loadAnyCheckpoint>;
  try {
    checkpoint = loadAnyCheckpoint(dir);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const stateFile = join(dir, CHECKPOINT_FILES.trainerJson);
  if (checkpoint.extra?.json === undefined) {
    return fail(`${stateFile} is missing: this is a model checkpoint without trainer state`);
  }
  if (checkpoint.tokenizerJson === undefined) {
    return fail(`${join(dir, CHECKPOINT_FILES.tokenizer)} is missing`);
  }
  let state: TrainerState;
  let tokenizer: Tokenizer;
  try {
    state = parseTrainerState(checkpoint.extra.json, stateFile);
    tokenizer = tokenizerFromJSON(checkpoint.tokenizerJson, join(dir, CHECKPOINT_FILES.tokenizer));
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const optimizer = new Map<string, NamedTensor>();
  const heads: NamedTensor[] = [];
  for (const t of checkpoint.extra.tensors ?? []) {
    const prefix = [OPTIMIZER_PREFIX, HEAD_PREFIX].find((p) => t.name.startsWith(p));
    if (prefix === undefined || !(t.data instanceof Float32Array)) {
      return fail(`${join(dir, CHECKPOINT_FILES.trainerTensors)} holds an unexpected tensor ${t.name}`);
    }
    const named = { name: t.name.slice(prefix.length), shape: t.shape, data: t.data };
    if (prefix === HEAD_PREFIX) heads.push(named);
    else optimizer.set(named.name, { ...named, name: t.name });
  }
  if (tokenizer.vocabSize > checkpoint.config.vocabSize) {
    fail(`the tokenizer has ${tokenizer.vocabSize} tokens but the model only ${checkpoint.config.vocabSize}`);
  }
  return { config: checkpoint.config, weights: checkpoint.tensors, heads, tokenizer, optimizer, state };
}
