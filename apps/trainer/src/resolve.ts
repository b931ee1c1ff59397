import { resolve } from 'node:path';
import { ARCH_OBJECTIVES } from './arch/names';
import { mergeResumed, parseArgs } from './args';
import { defaultOptions, type GivenOptions, type TrainOptions, validateOptions } from './options';

/** The defaults with `given` applied; key/value heads follow --heads and the objective --arch unless given. */
function withDefaults(given: GivenOptions, baseDir: string): TrainOptions {
  const options = { ...defaultOptions(resolve(baseDir, 'out', 'latest')), ...given };
  return {
    ...options,
    kvHeads: given.kvHeads ?? options.heads,
    objective: given.objective ?? ARCH_OBJECTIVES[options.arch][0],
  };
}

/**
 * The options of a run: for a new run the defaults and the given flags; for a resumed one the
 * flags saved in its checkpoint, with the adjustable ones given now applied and the output
 * going to the checkpoint's directory unless --out says otherwise.
 */
export function resolveOptions(
  given: GivenOptions,
  baseDir: string,
  savedArgs?: readonly string[],
): TrainOptions {
  if (savedArgs === undefined) return validateOptions(withDefaults(given, baseDir));
  const saved = parseArgs(savedArgs, baseDir);
  if (saved.kind !== 'train') throw new Error("the checkpoint's saved flags are not a training command");
  const savedOptions = withDefaults(saved.given, baseDir);
  return validateOptions(mergeResumed(savedOptions, { ...given, out: given.out ?? given.resume }));
}
