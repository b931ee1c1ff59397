import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A file of the shared data folder (`../shared/data` beside the repository, as CI has it, or `shared/data` inside
 * it), or undefined when it is not there.
 */
export function sharedDataFile(relative: string): string | undefined {
  return ['../../../../shared/data/', '../../../shared/data/']
    .map((dir) => fileURLToPath(new URL(dir + relative, import.meta.url)))
    .find((path) => existsSync(path));
}
