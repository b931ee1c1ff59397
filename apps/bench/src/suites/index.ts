import type { Suite } from '../suite';

/** Every benchmark suite, by the name given on the command line. */
export const suites: readonly Suite[] = [];
