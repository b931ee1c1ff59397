import { type ParseArgsConfig, parseArgs } from 'node:util';

/** The flags of a command, in `util.parseArgs`'s form. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/** A command line that cannot be run: printed on one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What a command line gave: the value of each flag by long name, the switches, and the positional arguments. */
export interface Flags {
  readonly values: ReadonlyMap<string, string>;
  readonly switches: ReadonlySet<string>;
  readonly positionals: readonly string[];
}

/**
 * Reads `--flag value`, `--flag=value`, `-x value` and `--switch` with util.parseArgs, leniently, so that each
 * mistake is a UsageError naming the argument: an unknown flag, a flag given twice, a value missing or given to a
 * switch, more positional arguments than `maxPositionals`.
 */
export function readFlags(argv: readonly string[], spec: FlagSpec, maxPositionals: number): Flags {
  const { tokens } = parseArgs({
    args: [...argv],
    options: spec,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (positionals.length === maxPositionals) {
        throw new UsageError(`unexpected argument ${JSON.stringify(token.value)}`);
      }
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(spec, token.name) ? spec[token.name] : undefined;
    if (option === undefined) throw new UsageError(`unknown flag ${token.rawName}`);
    const flag = `--${token.name}`;
    if (values.has(token.name) || switches.has(token.name))
      throw new UsageError(`${flag}: given twice; give it once`);
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${flag}: takes no value; write just ${flag}`);
      switches.add(token.name);
    } else if (token.value === undefined) {
      throw new UsageError(`${flag}: expected a value after it`);
    } else {
      values.set(token.name, token.value);
    }
  }
  return { values, switches, positionals };
}

/** A number flag's value, or `fallback` when it is absent; an integer at least `min` when `integer`. */
export function numberFlag(
  flags: Flags,
  name: string,
  fallback: number,
  integer = false,
  min = -Infinity,
): number {
  const text = flags.values.get(name);
  if (text === undefined) return fallback;
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min) {
    const what = integer ? (min === 1 ? 'a positive integer' : 'an integer') : 'a number';
    throw new UsageError(`--${name}: expected ${what}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A choice flag's value, or `fallback` when it is absent. */
export function choiceFlag<T extends string>(
  flags: Flags,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const text = flags.values.get(name);
  if (text === undefined) return fallback;
  const found = choices.find((choice) => choice === text);
  if (found === undefined) {
    const list = `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
    throw new UsageError(`--${name}: expected ${list}, got ${JSON.stringify(text)}`);
  }
  return found;
}
