import { main } from './cli';

const status = await main(
  process.argv.slice(2),
  { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
  process.env.INIT_CWD ?? process.cwd(),
);
// Exit once stdout is flushed: the CPU backend's worker threads can keep the event loop alive.
process.stdout.write('', () => process.exit(status));
