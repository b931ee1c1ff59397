import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A file of the shared folder (`../shared` beside the repository, as CI has it, or `shared`
 * inside it), or undefined when it is not there.
 */
function sharedFile(relative: string): string | undefined {
  return ['../../../../shared/', '../../../shared/']
    .map((dir) => fileURLToPath(new URL(dir + relative, import.meta.url)))
    .find((path) => existsSync(path));
}

/** A file of the shared data folder (`shared/data`), or undefined when it is not there. */
export function sharedDataFile(relative: string): string | undefined {
  return sharedFile(`data/${relative}`);
}

/** A file of the shared peers folder (`shared/peers`), or undefined when it is not there. */
export function sharedPeerFile(relative: string): string | undefined {
  return sharedFile(`peers/${relative}`);
}
