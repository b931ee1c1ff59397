import { ApiError } from './api-error';

/** A parsed JSON request body. */
export type Body = Readonly<Record<string, unknown>>;

/** What a JSON value is, for error messages. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

export function wrongType(param: string, expected: string, value: unknown): ApiError {
  return ApiError.invalid(param, 'invalid_type', `${param} must be ${expected}, got ${describeJson(value)}`);
}

export function outOfRange(param: string, range: string, value: unknown): ApiError {
  return ApiError.invalid(param, 'invalid_value', `${param} must be ${range}, got ${describeJson(value)}`);
}

/** A number field in [min, max], or undefined when absent or null. */
export function optionalNumber(body: Body, param: string, min: number, max: number): number | undefined {
  const value = body[param];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(param, 'a number', value);
  if (value < min || value > max) throw outOfRange(param, `a number in [${min}, ${max}]`, value);
  return value;
}

/** An integer field in [min, max], or undefined when absent or null. */
export function optionalInteger(body: Body, param: string, min: number, max: number): number | undefined {
  const value = body[param];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw wrongType(param, 'an integer', value);
  if (value < min || value > max) throw outOfRange(param, `an integer in [${min}, ${max}]`, value);
  return value;
}

/** A boolean field, or `fallback` when absent or null. */
export function optionalBoolean(body: Body, param: string, fallback: boolean): boolean {
  const value = body[param];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw wrongType(param, 'true or false', value);
  return value;
}

/** A field that must be an object when present. */
export function optionalObject(body: Body, param: string): Body | undefined {
  const value = body[param];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw wrongType(param, 'an object', value);
  return value as Body;
}

/** OpenAI's `stop`: a string or up to four strings, none empty. */
export function stopStrings(body: Body): string[] {
  const value = body.stop;
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) {
    throw wrongType('stop', 'a string or an array of strings', value);
  }
  if (list.length > 4) throw outOfRange('stop', 'at most 4 strings', value);
  if (list.some((s) => s === '')) throw outOfRange('stop', 'non-empty strings', value);
  return list;
}

/** OpenAI's `logit_bias`: token id (as a string) → bias in [-100, 100], ids inside the vocabulary. */
export function logitBias(body: Body, vocabSize: number): Record<number, number> | undefined {
  const bias = optionalObject(body, 'logit_bias');
  if (bias === undefined) return undefined;
  const out: Record<number, number> = {};
  for (const [key, value] of Object.entries(bias)) {
    const id = Number(key);
    if (!/^\d+$/.test(key) || id >= vocabSize) {
      throw outOfRange('logit_bias', `keyed by token ids in [0, ${vocabSize}) (the model's vocabulary)`, key);
    }
    if (typeof value !== 'number' || !(value >= -100 && value <= 100)) {
      throw outOfRange(`logit_bias.${key}`, 'a number in [-100, 100]', value);
    }
    out[id] = value;
  }
  return out;
}
