import { EXIT_INTERRUPTED, EXIT_TERMINATED, main } from './cli';

const controller = new AbortController();
process.once('SIGINT', () => {
  process.stderr.write('\nstopping after this step to save a checkpoint (Ctrl-C again quits at once)\n');
  controller.abort();
  process.once('SIGINT', () => process.exit(EXIT_INTERRUPTED));
});
// SIGTERM ends the run at once; exiting this way (not by the signal's default) releases the --out lock.
process.once('SIGTERM', () => process.exit(EXIT_TERMINATED));

const status = await main(
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr },
  { baseDir: process.env.INIT_CWD ?? process.cwd(), signal: controller.signal },
);
// Exit explicitly once stdout is flushed: the CPU backend's worker threads and dawn.node can
// keep the event loop alive after the work is done.
process.stdout.write('', () => process.exit(status));
