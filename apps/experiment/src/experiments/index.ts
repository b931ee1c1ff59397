import type { Experiment } from '../experiment';
import { archExperiment } from './arch';
import { contextExperiment } from './context';
import { moeExperiment } from './moe';
import { multiturnExperiment } from './multiturn';
import { rankExperiment } from './rank';

/** Every experiment `pnpm experiment <name>` runs. */
export const experiments: readonly Experiment[] = [
  rankExperiment,
  archExperiment,
  multiturnExperiment,
  contextExperiment,
  moeExperiment,
];
