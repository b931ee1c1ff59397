import { main } from './cli';

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
try {
  process.exitCode = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    signal: stop.signal,
  });
} catch (error) {
  process.stderr.write(`serve: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
