/**
 * Typed readers for untrusted JSON (tokenizer files, model configs, checkpoint indexes): every error names the
 * source, the key path, what was expected and what was found.
 */

export type JsonObject = { readonly [key: string]: unknown };

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short printable form of a JSON value for error messages. */
export function describeJson(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Throws `<source>: key "<key>": expected <expected>, found <value>`. */
export function jsonFail(source: string, key: string, expected: string, found: unknown): never {
  throw new Error(`${source}: key "${key}": expected ${expected}, found ${describeJson(found)}`);
}

/** Parses JSON text, turning a syntax error into one that names the source. */
export function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${source}: not valid JSON (${reason}); the file is corrupt or not the expected format`);
  }
}

export function readObject(value: unknown, source: string, key: string): JsonObject {
  if (!isJsonObject(value)) jsonFail(source, key, 'an object', value);
  return value;
}

export function readArray(value: unknown, source: string, key: string): readonly unknown[] {
  if (!Array.isArray(value)) jsonFail(source, key, 'an array', value);
  return value;
}

export function readString(value: unknown, source: string, key: string): string {
  if (typeof value !== 'string') jsonFail(source, key, 'a string', value);
  return value;
}

/** A string, or `fallback` when absent or null. */
export function readOptionalString(
  value: unknown,
  source: string,
  key: string,
  fallback: string | undefined,
): string | undefined {
  return value === undefined || value === null ? fallback : readString(value, source, key);
}

/** An integer from `min` to `max` (inclusive). */
export function readInteger(
  value: unknown,
  source: string,
  key: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    jsonFail(source, key, `an integer ${range}`, value);
  }
  return value;
}

/** A non-negative integer id, or undefined when absent or null. */
export function readOptionalId(value: unknown, source: string, key: string): number | undefined {
  return value === null || value === undefined ? undefined : readInteger(value, source, key);
}

export function readNumber(value: unknown, source: string, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) jsonFail(source, key, 'a finite number', value);
  return value;
}

export function readPositiveNumber(value: unknown, source: string, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    jsonFail(source, key, 'a positive number', value);
  }
  return value;
}

/** A boolean; with a `fallback`, absent or null reads as the fallback, without one it is refused. */
export function readBoolean(value: unknown, source: string, key: string, fallback?: boolean): boolean {
  if ((value === undefined || value === null) && fallback !== undefined) return fallback;
  if (typeof value !== 'boolean') jsonFail(source, key, 'true or false', value);
  return value;
}

/** One of the listed string literals. */
export function readChoice<const T extends string>(
  value: unknown,
  choices: readonly T[],
  source: string,
  key: string,
): T {
  const found = choices.find((choice) => choice === value);
  if (found === undefined) {
    jsonFail(source, key, `one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}`, value);
  }
  return found;
}
