import type { GgufValue } from './header';

/** Typed reads of GGUF metadata: each error names the file and the key, what was expected and what was found. */
export class Metadata {
  constructor(
    private readonly values: ReadonlyMap<string, GgufValue>,
    private readonly source: string,
  ) {}

  has(key: string): boolean {
    return this.values.has(key);
  }

  private fail(key: string, expected: string): never {
    const found = this.values.get(key);
    const shown = found === undefined ? 'nothing' : JSON.stringify(found).slice(0, 60);
    throw new Error(`${this.source}: metadata "${key}": expected ${expected}, found ${shown}`);
  }

  /** An integer from `min` to `max`, or `fallback` when the key is absent and a fallback is given. */
  integer(key: string, min: number, max: number, fallback?: number): number {
    const value = this.values.get(key);
    if (value === undefined && fallback !== undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(key, `an integer from ${min} to ${max}`);
    }
    return value;
  }

  positive(key: string, fallback: number): number {
    const value = this.values.get(key) ?? fallback;
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))
      this.fail(key, 'a positive number');
    return value;
  }

  text(key: string, fallback?: string): string {
    const value = this.values.get(key) ?? fallback;
    if (typeof value !== 'string') this.fail(key, 'a string');
    return value;
  }

  strings(key: string): string[] {
    const value = this.values.get(key);
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string'))
      this.fail(key, 'an array of strings');
    return value as string[];
  }

  numbers(key: string, length: number): number[] {
    const value = this.values.get(key);
    if (
      !Array.isArray(value) ||
      value.length !== length ||
      !value.every((item) => typeof item === 'number')
    ) {
      this.fail(key, `an array of ${length} numbers`);
    }
    return value as number[];
  }
}
