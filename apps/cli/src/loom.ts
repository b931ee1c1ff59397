#!/usr/bin/env node
import { commandOf, run } from './run';

/** Exit statuses as shells report Ctrl-C (SIGINT) and SIGTERM. */
const EXIT_INTERRUPTED = 130;
const EXIT_TERMINATED = 143;

const argv = process.argv.slice(2);
const controller = new AbortController();
// The first Ctrl-C asks the command to stop (a generation ends, training checkpoints); the second quits at once.
// `loom chat` on a terminal reads Ctrl-C itself, as a key.
process.once('SIGINT', () => {
  const notice = commandOf(argv[0] === '--' ? argv.slice(1) : argv)?.onInterrupt;
  if (notice !== undefined) process.stderr.write(`\n${notice}\n`);
  controller.abort();
  process.once('SIGINT', () => process.exit(EXIT_INTERRUPTED));
});
// SIGTERM ends at once; exiting this way (not by the signal's default) releases the trainer's --out lock.
process.once('SIGTERM', () => process.exit(EXIT_TERMINATED));

const status = await run(argv, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
// Exit once stdout is flushed: the CPU backend's worker threads and dawn.node can keep the event loop alive.
process.stdout.write('', () => process.exit(status));
