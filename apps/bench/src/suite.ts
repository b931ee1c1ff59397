import type { FlagSpec, FlagValues } from './flags';

/** Options every benchmark suite receives from the command line. */
export interface SuiteOptions {
  /** Compute backend to measure, where the suite uses one. */
  readonly backend: 'cpu' | 'webgpu';
  /** The suite's own flags, parsed. */
  readonly values: FlagValues;
  /** Positional arguments after the suite name. */
  readonly positionals: readonly string[];
}

/** One row of a result table: column name to value. */
export type Row = Readonly<Record<string, string | number>>;

/** What a suite returns: a titled table, printed and written as JSON. */
export interface SuiteResult {
  readonly title: string;
  readonly rows: readonly Row[];
  readonly notes?: readonly string[];
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  /** Flags beyond the common ones (--backend, --json, --help). */
  readonly flags: FlagSpec;
  /** The suite's usage line, after `pnpm bench NAME`. */
  readonly usage: string;
  run(options: SuiteOptions): Promise<SuiteResult>;
}
