import { parseArgs, USAGE, UsageError } from './args';
import type { TrainIO } from './io';
import { OptionsError } from './options';
import { train } from './train';

export interface CliContext {
  /** Where relative paths start: the directory pnpm was run in. */
  readonly baseDir: string;
  /** Aborted on Ctrl-C: the run checkpoints and stops. */
  readonly signal?: AbortSignal;
}

/** Exit status of an interrupted run, as shells report Ctrl-C. */
export const EXIT_INTERRUPTED = 130;
/** Exit status of a run ended by SIGTERM, as shells report it. */
export const EXIT_TERMINATED = 143;

/** The `loom train` command: parses the flags, trains, and returns the exit status (2 for bad flags). */
export async function main(argv: readonly string[], io: TrainIO, context: CliContext): Promise<number> {
  try {
    const command = parseArgs(argv, context.baseDir);
    if (command.kind === 'help') {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const result = await train(command.given, context.baseDir, io, { signal: context.signal });
    return result.end === 'interrupted' ? EXIT_INTERRUPTED : 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const usage = error instanceof UsageError;
    io.stderr.write(`train: ${message}${usage ? '; see loom train --help' : ''}\n`);
    return usage || error instanceof OptionsError ? 2 : 1;
  }
}
