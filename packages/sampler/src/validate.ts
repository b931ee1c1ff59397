import { SamplerConfigError } from './config-error';

/** An interval of valid values; an infinite bound is always open. */
interface Interval {
  min: number;
  max: number;
  minOpen?: boolean;
  maxOpen?: boolean;
}

function formatBound(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '∞';
  if (value === Number.NEGATIVE_INFINITY) return '-∞';
  return String(value);
}

function isMinOpen(interval: Interval): boolean {
  return interval.minOpen === true || interval.min === Number.NEGATIVE_INFINITY;
}

function isMaxOpen(interval: Interval): boolean {
  return interval.maxOpen === true || interval.max === Number.POSITIVE_INFINITY;
}

/** `(0, 1]`, `[0, ∞)`: the interval in the usual notation. */
function formatInterval(interval: Interval): string {
  const open = isMinOpen(interval) ? '(' : '[';
  const close = isMaxOpen(interval) ? ')' : ']';
  return `${open}${formatBound(interval.min)}, ${formatBound(interval.max)}${close}`;
}

/** How a received value reads in an error message: numbers as written, anything else with its type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `${JSON.stringify(value)} (a string)`;
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
}

function inInterval(value: number, interval: Interval): boolean {
  const aboveMin = isMinOpen(interval) ? value > interval.min : value >= interval.min;
  const belowMax = isMaxOpen(interval) ? value < interval.max : value <= interval.max;
  return aboveMin && belowMax;
}

function withNote(note: string | undefined): string {
  return note === undefined ? '' : `; ${note}`;
}

/** `value` as a number in `interval`, or a `SamplerConfigError` naming the field, the range and the value. */
export function checkNumber(field: string, value: unknown, interval: Interval, note?: string): number {
  if (typeof value !== 'number' || !inInterval(value, interval)) {
    throw new SamplerConfigError(
      field,
      `${field} must be in ${formatInterval(interval)}, got ${describeValue(value)}${withNote(note)}`,
    );
  }
  return value;
}

/** `value` as an integer in `interval`, or a `SamplerConfigError` naming the field, the range and the value. */
export function checkInteger(field: string, value: unknown, interval: Interval, note?: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || !inInterval(value, interval)) {
    throw new SamplerConfigError(
      field,
      `${field} must be an integer in ${formatInterval(interval)}, got ${describeValue(value)}${withNote(note)}`,
    );
  }
  return value;
}

/** Rejects fields a config does not define (a typo such as `top_p` would otherwise be ignored silently). */
export function checkKnownFields(what: string, config: object, known: readonly string[]): void {
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) {
      throw new SamplerConfigError(key, `${what} has no field '${key}'; valid fields: ${known.join(', ')}`);
    }
  }
}

/** A token id: an integer in [0, vocabSize), or an error naming where it came from. */
export function checkTokenId(field: string, token: unknown, vocabSize: number): number {
  if (typeof token !== 'number' || !Number.isInteger(token) || token < 0 || token >= vocabSize) {
    throw new RangeError(
      `${field} holds token ${describeValue(token)}, outside the vocabulary of ${vocabSize} logits ` +
        `(valid ids: 0 to ${vocabSize - 1})`,
    );
  }
  return token;
}
