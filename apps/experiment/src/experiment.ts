import type { Report } from './report';

/** How big an experiment runs: its default size (minutes on 2 cores), or a tiny one that tests use. */
export type Scale = 'default' | 'quick';

export interface ExperimentContext {
  readonly scale: Scale;
  readonly seed: number;
  /** A text file to train on instead of the built-in stories (experiments that train on text). */
  readonly data?: string;
  /** Progress lines (to stderr). */
  readonly log: (line: string) => void;
}

/** One experiment: it trains and measures, then states its result in a report. */
export interface Experiment {
  readonly name: string;
  readonly description: string;
  run(context: ExperimentContext): Promise<Report>;
}
