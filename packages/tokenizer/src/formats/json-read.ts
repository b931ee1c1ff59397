/** Small typed readers for untrusted JSON; errors name the source and the key path. */

export type JsonObject = { readonly [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short printable form of a JSON value for error messages. */
export function describe(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function fail(source: string, path: string, expected: string, got: unknown): never {
  throw new Error(`${source}: key "${path}": expected ${expected}, got ${describe(got)}`);
}

export function readObject(value: unknown, source: string, path: string): JsonObject {
  if (!isObject(value)) fail(source, path, 'an object', value);
  return value;
}

export function readArray(value: unknown, source: string, path: string): readonly unknown[] {
  if (!Array.isArray(value)) fail(source, path, 'an array', value);
  return value;
}

export function readString(value: unknown, source: string, path: string): string {
  if (typeof value !== 'string') fail(source, path, 'a string', value);
  return value;
}

/** An integer from `min` to `max` (inclusive). */
export function readInteger(
  value: unknown,
  source: string,
  path: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(
      source,
      path,
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
      value,
    );
  }
  return value;
}

export function readNumber(value: unknown, source: string, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(source, path, 'a finite number', value);
  return value;
}

/** An integer id, or undefined for `null`/absent. */
export function readOptionalId(value: unknown, source: string, path: string): number | undefined {
  return value === null || value === undefined ? undefined : readInteger(value, source, path);
}

/** One of the listed string literals. */
export function readChoice<const T extends string>(
  value: unknown,
  choices: readonly T[],
  source: string,
  path: string,
): T {
  const found = choices.find((choice) => choice === value);
  if (found === undefined)
    fail(source, path, `one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`, value);
  return found;
}

/** A boolean, or `fallback` when absent/null. */
export function readBoolean(value: unknown, source: string, path: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') fail(source, path, 'true or false', value);
  return value;
}

/** A string, or `fallback` when absent/null. */
export function readOptionalString(
  value: unknown,
  source: string,
  path: string,
  fallback: string | undefined,
): string | undefined {
  return value === undefined || value === null ? fallback : readString(value, source, path);
}

/**
 * The `type` of a tokenizer.json component (`normalizer`, `pre_tokenizer`...), refused by name when Loom does not
 * implement it.
 */
export function readType<const T extends string>(
  object: JsonObject,
  types: readonly T[],
  source: string,
  path: string,
): T {
  const found = types.find((type) => type === object.type);
  if (found !== undefined) return found;
  const key = `${path}.type`;
  if (typeof object.type !== 'string') fail(source, key, 'a string', object.type);
  throw new Error(
    `${source}: key "${key}": ${JSON.stringify(object.type)} is not supported by Loom; expected one of ` +
      `${types.map((t) => JSON.stringify(t)).join(', ')} (use a tokenizer.json without it)`,
  );
}
