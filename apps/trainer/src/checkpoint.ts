import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHECKPOINT_FILES,
  loadCheckpoint,
  type NamedTensor,
  type StoredTensor,
  saveCheckpoint,
  tensorsFromTransformer,
} from '@loom/models';
import type { Optimizer, TransformerConfig, TransformerLM } from '@loom/nn';
import { type Tokenizer, tokenizerFromJSON } from '@loom/tokenizer';
import { parseTrainerState, type TrainerState, trainerStateJson } from './trainer-state';

/** Optimizer state tensors are stored as `optimizer.<name>` (AdamW: `optimizer.m.0`, `optimizer.v.0`, ...). */
const OPTIMIZER_PREFIX = 'optimizer.';

/** A run as saved in a checkpoint directory. */
export interface SavedRun {
  readonly config: TransformerConfig;
  readonly weights: readonly NamedTensor[];
  readonly tokenizer: Tokenizer;
  /** Optimizer state by the optimizer's own names. */
  readonly optimizer: ReadonlyMap<string, NamedTensor>;
  readonly state: TrainerState;
}

export interface RunToSave {
  readonly model: TransformerLM;
  readonly optimizer: Optimizer;
  readonly tokenizer: Tokenizer;
  readonly state: TrainerState;
}

/**
 * Saves weights (`model.safetensors`), `config.json`, `tokenizer.json`, the optimizer state
 * (`trainer-state.safetensors`) and `trainer-state.json` through @loom/models, which writes
 * every file under a temporary name, renames them into place with config.json (holding every
 * file's size and SHA-256) last, so a crash never leaves a checkpoint that loads wrongly.
 */
export async function saveRun(dir: string, run: RunToSave): Promise<void> {
  const optimizer: StoredTensor[] = [];
  for (const [name, t] of run.optimizer.state()) {
    if (t.dtype !== 'f32') throw new Error(`saveRun: optimizer state ${name} is not float32`);
    optimizer.push({ name: OPTIMIZER_PREFIX + name, shape: [...t.shape], data: await t.float32Data() });
  }
  saveCheckpoint(dir, {
    config: run.model.config,
    tensors: await tensorsFromTransformer(run.model),
    tokenizerJson: JSON.stringify(run.tokenizer.toJSON()),
    extra: { tensors: optimizer, json: trainerStateJson(run.state) },
  });
}

/** Loads a checkpoint saved by `saveRun`, refusing with a clear message anything incomplete or corrupt. */
export function loadRun(dir: string): SavedRun {
  const fail = (reason: string): never => {
    throw new Error(`--resume ${dir}: cannot resume: ${reason}`);
  };
  if (!existsSync(dir)) fail('no such directory');
  let checkpoint: ReturnType<typeof loadCheckpoint>;
  try {
    checkpoint = loadCheckpoint(dir);
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
  for (const t of checkpoint.extra.tensors ?? []) {
    if (!t.name.startsWith(OPTIMIZER_PREFIX) || !(t.data instanceof Float32Array)) {
      return fail(`${join(dir, CHECKPOINT_FILES.trainerTensors)} holds an unexpected tensor ${t.name}`);
    }
    optimizer.set(t.name.slice(OPTIMIZER_PREFIX.length), { name: t.name, shape: t.shape, data: t.data });
  }
  if (tokenizer.vocabSize !== checkpoint.config.vocabSize) {
    fail(
      `the tokenizer has ${tokenizer.vocabSize} tokens but the model expects ${checkpoint.config.vocabSize}`,
    );
  }
  return { config: checkpoint.config, weights: checkpoint.tensors, tokenizer, optimizer, state };
}
