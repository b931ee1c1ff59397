/** Typed readers for untrusted JSON: every error names the source, the key, what was expected and what was found. */

export type JsonObject = { readonly [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short printable form of a JSON value for error messages. */
export function describeJson(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

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

export function readString(value: unknown, source: string, key: string): string {
  if (typeof value !== 'string') jsonFail(source, key, 'a string', value);
  return value;
}

/** An integer from `min` to `max` (inclusive). */
export function readInteger(
  value: unknown,
  source: string,
  key: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    jsonFail(source, key, `an integer ${range}`, value);
  }
  return value;
}

export function readPositiveNumber(value: unknown, source: string, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    jsonFail(source, key, 'a positive number', value);
  }
  return value;
}

export function readBoolean(value: unknown, source: string, key: string): boolean {
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
