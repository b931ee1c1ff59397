import { CONFIG_LIMITS, ROPE_SCALING_TYPES, type RopeScaling } from '@loom/nn';
import {
  describeJson,
  type JsonObject,
  readBoolean,
  readChoice,
  readInteger,
  readObject,
  readPositiveNumber,
} from '@loom/tokenizer';

/** The keys of a RoPE scaling that hold numbers read when present. */
type NumberKey = 'factor' | 'betaFast' | 'betaSlow' | 'attentionFactor' | 'mscale' | 'mscaleAllDim';
/** Every key of a RoPE scaling but its type. */
type ReadKey = NumberKey | 'lowFreqFactor' | 'highFreqFactor' | 'originalMaxSeqLen' | 'truncate';

/** Each key's Loom name (camelCase, as in `ropeScaling`) and Hugging Face name (snake_case, in `rope_scaling`). */
const HF_KEYS: readonly (readonly [loom: ReadKey, hf: string])[] = [
  ['factor', 'factor'],
  ['betaFast', 'beta_fast'],
  ['betaSlow', 'beta_slow'],
  ['attentionFactor', 'attention_factor'],
  ['mscale', 'mscale'],
  ['mscaleAllDim', 'mscale_all_dim'],
  ['lowFreqFactor', 'low_freq_factor'],
  ['highFreqFactor', 'high_freq_factor'],
  ['originalMaxSeqLen', 'original_max_position_embeddings'],
  ['truncate', 'truncate'],
];

function hfName(key: ReadKey): string {
  return HF_KEYS.find(([loom]) => loom === key)?.[1] ?? key;
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * Reads one scaling object, its keys named by `name` (HF's snake_case or Loom's own); a dynamic scaling's original
 * context only when `dynamicOriginal` (transformers ignores it).
 */
function readScaling(
  object: JsonObject,
  type: RopeScaling['type'],
  source: string,
  where: string,
  name: (key: ReadKey) => string,
  dynamicOriginal: boolean,
): RopeScaling {
  const path = (key: ReadKey) => `${where}.${name(key)}`;
  const number = (key: ReadKey) => readPositiveNumber(object[name(key)], source, path(key));
  const optional = (key: NumberKey) => (absent(object[name(key)]) ? {} : { [key]: number(key) });
  const original = () =>
    readInteger(
      object[name('originalMaxSeqLen')],
      source,
      path('originalMaxSeqLen'),
      1,
      CONFIG_LIMITS.maxSeqLen,
    );
  const optionalOriginal = () =>
    absent(object[name('originalMaxSeqLen')]) ? {} : { originalMaxSeqLen: original() };
  const factor = number('factor');
  switch (type) {
    case 'linear':
      return { type, factor };
    case 'dynamic':
      return { type, factor, ...(dynamicOriginal ? optionalOriginal() : {}) };
    case 'yarn':
      return {
        type,
        factor,
        ...optionalOriginal(),
        ...optional('betaFast'),
        ...optional('betaSlow'),
        ...optional('attentionFactor'),
        ...optional('mscale'),
        ...optional('mscaleAllDim'),
        ...(absent(object[name('truncate')])
          ? {}
          : { truncate: readBoolean(object[name('truncate')], source, path('truncate')) }),
      };
    case 'llama3':
      return {
        type,
        factor,
        lowFreqFactor: number('lowFreqFactor'),
        highFreqFactor: number('highFreqFactor'),
        originalMaxSeqLen: original(),
      };
  }
}

/**
 * The `rope_scaling` of a Hugging Face config.json (absent, null or type "default": none). The type is
 * `rope_type`, or the older `type`; linear, dynamic, yarn and llama3 are read with their keys, others (longrope,
 * su, …) are refused by name. For dynamic, `original_max_position_embeddings` is not read: transformers scales past
 * max_position_embeddings.
 */
export function readHfRopeScaling(value: unknown, source: string): RopeScaling | undefined {
  if (absent(value)) return undefined;
  const object = readObject(value, source, 'rope_scaling');
  const typeKey = absent(object.rope_type) ? 'type' : 'rope_type';
  const type = object[typeKey];
  if (type === 'default') return undefined;
  const known = ROPE_SCALING_TYPES.find((t) => t === type);
  if (known === undefined) {
    throw new Error(
      `${source}: key "rope_scaling.${typeKey}" is ${describeJson(type)}; Loom implements ${ROPE_SCALING_TYPES.map((t) => `"${t}"`).join(', ')} (or "default") — use a model with one of them`,
    );
  }
  return readScaling(object, known, source, 'rope_scaling', hfName, false);
}

/** The `rope_scaling` object a Hugging Face config.json holds for a scaling (`rope_type` and snake_case keys). */
export function hfRopeScaling(scaling: RopeScaling): Record<string, unknown> {
  const fields: Partial<Record<ReadKey, number | boolean>> = scaling;
  const json: Record<string, unknown> = { rope_type: scaling.type };
  for (const [key, hfKey] of HF_KEYS) {
    const value = fields[key];
    if (value !== undefined) json[hfKey] = value;
  }
  return json;
}

/** Loom's own `ropeScaling` (camelCase keys, `type`), as written by `loomConfigJsonText`. */
export function readLoomRopeScaling(value: unknown, source: string): RopeScaling {
  const object = readObject(value, source, 'ropeScaling');
  const type = readChoice(object.type, ROPE_SCALING_TYPES, source, 'ropeScaling.type');
  return readScaling(object, type, source, 'ropeScaling', (key) => key, true);
}
