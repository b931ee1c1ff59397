import { CONFIG_LIMITS, type ConfigSize, PRESETS, validateConfig } from '@loom/nn';
import {
  isJsonObject,
  type JsonObject,
  readBoolean,
  readChoice,
  readInteger,
  readObject,
  readPositiveNumber,
  readString,
} from '@loom/tokenizer';
import type { ModelConfig } from './config';

/** The marker that tells a Loom `config.json` from a Hugging Face one. */
export const LOOM_FORMAT = 'loom';
/** Version of the Loom checkpoint layout this code writes and reads. */
export const LOOM_CHECKPOINT_VERSION = 1;

/** Size and SHA-256 of one file of a checkpoint, as recorded in its config.json. */
export interface FileRecord {
  bytes: number;
  sha256: string;
}

/** A Loom `config.json`: the model config and the manifest of the files saved with it. */
export interface LoomConfigJson {
  config: ModelConfig;
  files: Record<string, FileRecord>;
}

export function isLoomConfigJson(json: unknown): boolean {
  return isJsonObject(json) && json.format === LOOM_FORMAT;
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * The JSON text of a Loom config.json: `format`, `version`, the ModelConfig fields (the optional headDim, qkvBias
 * and qkNorm only when set), then `files`.
 */
export function loomConfigJsonText(contents: LoomConfigJson): string {
  const { config } = contents;
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
    tiedEmbeddings: config.tiedEmbeddings,
    bias: config.bias,
    ...(config.headDim === undefined ? {} : { headDim: config.headDim }),
    ...(config.qkvBias === undefined ? {} : { qkvBias: config.qkvBias }),
    ...(config.qkNorm === undefined ? {} : { qkNorm: config.qkNorm }),
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

/** Reads a Loom config.json (already parsed), refusing other formats and newer versions by name. */
export function parseLoomConfigJson(json: unknown, source = 'config.json'): LoomConfigJson {
  const object = readObject(json, source, '(top level)');
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
    tiedEmbeddings: readBoolean(object.tiedEmbeddings, source, 'tiedEmbeddings'),
    bias: readBoolean(object.bias, source, 'bias'),
    ...(absent(object.headDim)
      ? {}
      : { headDim: readInteger(object.headDim, source, 'headDim', 1, CONFIG_LIMITS.hiddenDim) }),
    ...(absent(object.qkvBias) ? {} : { qkvBias: readBoolean(object.qkvBias, source, 'qkvBias') }),
    ...(absent(object.qkNorm) ? {} : { qkNorm: readBoolean(object.qkNorm, source, 'qkNorm') }),
  };
  validateConfig(config, source);
  return { config, files: readFiles(object.files, source) };
}
