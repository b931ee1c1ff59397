import {
  CONFIG_LIMITS,
  type ConfigSize,
  type MambaConfig,
  type MoeConfig,
  PRESETS,
  validateConfig,
  validateMambaConfig,
} from '@loom/nn';
import {
  isJsonObject,
  type JsonObject,
  readBoolean,
  readChoice,
  readInteger,
  readNumber,
  readObject,
  readPositiveNumber,
  readString,
} from '@loom/tokenizer';
import { type CheckpointConfig, isMambaConfig, type ModelConfig } from './config';
import { readLoomRopeScaling } from './rope-scaling-json';

/** The marker that tells a Loom `config.json` from a Hugging Face one. */
export const LOOM_FORMAT = 'loom';
/** Version of the Loom checkpoint layout this code writes and reads. */
export const LOOM_CHECKPOINT_VERSION = 1;

/** Size and SHA-256 of one file of a checkpoint, as recorded in its config.json. */
export interface FileRecord {
  bytes: number;
  sha256: string;
}

/** A Loom `config.json`: the model config (a transformer's unless `C` says otherwise) and the manifest of the files saved with it. */
export interface LoomConfigJson<C extends CheckpointConfig = ModelConfig> {
  config: C;
  files: Record<string, FileRecord>;
}

export function isLoomConfigJson(json: unknown): boolean {
  return isJsonObject(json) && json.format === LOOM_FORMAT;
}

/** Whether a parsed config.json is a Loom checkpoint's of a Mamba model (`"arch": "mamba"`). */
export function isMambaConfigJson(json: unknown): boolean {
  return isJsonObject(json) && json.format === LOOM_FORMAT && json.arch === 'mamba';
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** The fields of a Mamba config in a Loom config.json, after `"arch": "mamba"`. */
function mambaJson(config: MambaConfig) {
  const { arch, vocabSize, dim, numLayers, stateSize, expand, convWidth, dtRank, normEps, tiedEmbeddings } =
    config;
  return { arch, vocabSize, dim, numLayers, stateSize, expand, convWidth, dtRank, normEps, tiedEmbeddings };
}

/**
 * The JSON text of a Loom config.json: `format`, `version`, the ModelConfig fields (the optional ropeScaling,
 * headDim, qkvBias, qkNorm and slidingWindow only when set) — or for a Mamba model `"arch": "mamba"` and the
 * MambaConfig fields — then `files`.
 */
export function loomConfigJsonText(contents: LoomConfigJson<CheckpointConfig>): string {
  const { config } = contents;
  if (isMambaConfig(config)) {
    const json = {
      format: LOOM_FORMAT,
      version: LOOM_CHECKPOINT_VERSION,
      ...mambaJson(config),
      files: contents.files,
    };
    return `${JSON.stringify(json, null, 2)}\n`;
  }
  const json = {
    format: LOOM_FORMAT,
    version: LOOM_CHECKPOINT_VERSION,
    preset: config.preset,
    vocabSize: config.vocabSize,
    dim: config.dim,
    numLayers: config.numLayers,
    numHeads: config.numHeads,
    numKvHeads: config.numKvHeads,
    hiddenDim: config.hiddenDim,
    maxSeqLen: config.maxSeqLen,
    normEps: config.normEps,
    ropeTheta: config.ropeTheta,
    ...(config.ropeScaling === undefined ? {} : { ropeScaling: config.ropeScaling }),
    tiedEmbeddings: config.tiedEmbeddings,
    bias: config.bias,
    ...(config.headDim === undefined ? {} : { headDim: config.headDim }),
    ...(config.qkvBias === undefined ? {} : { qkvBias: config.qkvBias }),
    ...(config.qkNorm === undefined ? {} : { qkNorm: config.qkNorm }),
    ...(config.slidingWindow === undefined ? {} : { slidingWindow: config.slidingWindow }),
    ...(config.moe === undefined ? {} : { moe: config.moe }),
    files: contents.files,
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

function readFiles(value: unknown, source: string): Record<string, FileRecord> {
  const files: Record<string, FileRecord> = {};
  for (const [name, record] of Object.entries(readObject(value, source, 'files'))) {
    const entry: JsonObject = readObject(record, source, `files.${name}`);
    const sha256 = readString(entry.sha256, source, `files.${name}.sha256`);
    files[name] = { bytes: readInteger(entry.bytes, source, `files.${name}.bytes`, 0), sha256 };
  }
  return files;
}

/** The `moe` object of a Loom config.json: experts and topK, and auxLossCoef and capacityFactor when set. */
function readMoe(value: unknown, source: string): MoeConfig {
  const moe = readObject(value, source, 'moe');
  const number = (key: 'auxLossCoef' | 'capacityFactor') =>
    absent(moe[key]) ? {} : { [key]: readNumber(moe[key], source, `moe.${key}`) };
  return {
    experts: readInteger(moe.experts, source, 'moe.experts', 1),
    topK: readInteger(moe.topK, source, 'moe.topK', 1),
    ...number('auxLossCoef'),
    ...number('capacityFactor'),
  };
}

/** The Mamba config of a Loom config.json whose `arch` is "mamba", checked by nn's `validateMambaConfig`. */
function readMambaConfig(object: JsonObject, source: string): MambaConfig {
  const int = (key: 'vocabSize' | 'dim' | 'numLayers' | 'stateSize' | 'expand' | 'convWidth' | 'dtRank') =>
    readInteger(object[key], source, key, 1);
  const config: MambaConfig = {
    arch: 'mamba',
    vocabSize: int('vocabSize'),
    dim: int('dim'),
    numLayers: int('numLayers'),
    stateSize: int('stateSize'),
    expand: int('expand'),
    convWidth: int('convWidth'),
    dtRank: int('dtRank'),
    normEps: readPositiveNumber(object.normEps, source, 'normEps'),
    tiedEmbeddings: readBoolean(object.tiedEmbeddings, source, 'tiedEmbeddings'),
  };
  validateMambaConfig(config, source);
  return config;
}

/**
 * Reads a Loom config.json (already parsed) of any architecture Loom checkpoints hold: a transformer (no `arch`
 * key) or a Mamba model (`"arch": "mamba"`); refuses other formats, architectures and newer versions by name.
 */
export function parseCheckpointConfigJson(
  json: unknown,
  source = 'config.json',
): LoomConfigJson<CheckpointConfig> {
  const object = readObject(json, source, '(top level)');
  if (absent(object.arch)) return parseLoomConfigJson(object, source);
  if (object.arch !== 'mamba') {
    throw new Error(
      `${source}: key "arch" is ${JSON.stringify(object.arch)}; Loom checkpoints hold "mamba" or, without the key, a transformer`,
    );
  }
  checkFormat(object, source);
  return { config: readMambaConfig(object, source), files: readFiles(object.files, source) };
}

/** Refuses a config.json that is not Loom's, or is of a newer version. */
function checkFormat(object: JsonObject, source: string): void {
  if (object.format !== LOOM_FORMAT) {
    throw new Error(
      `${source}: key "format" is ${JSON.stringify(object.format)}; expected "${LOOM_FORMAT}" — not a Loom checkpoint config`,
    );
  }
  const version = readInteger(object.version, source, 'version', 1);
  if (version > LOOM_CHECKPOINT_VERSION) {
    throw new Error(
      `${source}: checkpoint version ${version} is newer than this Loom reads (${LOOM_CHECKPOINT_VERSION}); update Loom`,
    );
  }
}

/**
 * Reads a transformer's Loom config.json (already parsed), refusing other formats and newer versions by name, and
 * a Mamba checkpoint's (read those with `parseCheckpointConfigJson`).
 */
export function parseLoomConfigJson(json: unknown, source = 'config.json'): LoomConfigJson {
  const object = readObject(json, source, '(top level)');
  if (!absent(object.arch)) {
    throw new Error(
      `${source}: key "arch" is ${JSON.stringify(object.arch)}: not a transformer — build it with the model of its architecture (MambaLM for "mamba"; parseCheckpointConfigJson / loadAnyCheckpoint read it)`,
    );
  }
  checkFormat(object, source);
  const int = (key: ConfigSize) => readInteger(object[key], source, key, 1, CONFIG_LIMITS[key]);
  const config: ModelConfig = {
    preset: readChoice(object.preset, PRESETS, source, 'preset'),
    vocabSize: int('vocabSize'),
    dim: int('dim'),
    numLayers: int('numLayers'),
    numHeads: int('numHeads'),
    numKvHeads: int('numKvHeads'),
    hiddenDim: int('hiddenDim'),
    maxSeqLen: int('maxSeqLen'),
    normEps: readPositiveNumber(object.normEps, source, 'normEps'),
    ropeTheta: readPositiveNumber(object.ropeTheta, source, 'ropeTheta'),
    ...(absent(object.ropeScaling) ? {} : { ropeScaling: readLoomRopeScaling(object.ropeScaling, source) }),
    tiedEmbeddings: readBoolean(object.tiedEmbeddings, source, 'tiedEmbeddings'),
    bias: readBoolean(object.bias, source, 'bias'),
    ...(absent(object.headDim)
      ? {}
      : { headDim: readInteger(object.headDim, source, 'headDim', 1, CONFIG_LIMITS.hiddenDim) }),
    ...(absent(object.qkvBias) ? {} : { qkvBias: readBoolean(object.qkvBias, source, 'qkvBias') }),
    ...(absent(object.qkNorm) ? {} : { qkNorm: readBoolean(object.qkNorm, source, 'qkNorm') }),
    ...(absent(object.slidingWindow)
      ? {}
      : {
          slidingWindow: readInteger(
            object.slidingWindow,
            source,
            'slidingWindow',
            1,
            CONFIG_LIMITS.maxSeqLen,
          ),
        }),
    ...(absent(object.moe) ? {} : { moe: readMoe(object.moe, source) }),
  };
  validateConfig(config, source);
  return { config, files: readFiles(object.files, source) };
}
