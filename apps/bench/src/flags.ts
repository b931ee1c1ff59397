import type { ParseArgsConfig } from 'node:util';

/** The flags a suite accepts, in `util.parseArgs`'s form. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/** Parsed flag values (no flag of the bench is repeatable). */
export type FlagValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/** A bad command line: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** The value of a string flag, or undefined when absent. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError(`--${name}: expected a value`);
  return value;
}

/** The value of an integer flag ≥ `min`, or undefined when absent. */
export function integerFlag(values: FlagValues, name: string, min: number): number | undefined {
  const text = stringFlag(values, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`--${name}: expected an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** Whether a boolean flag was given. */
export function booleanFlag(values: FlagValues, name: string): boolean {
  return values[name] === true;
}
