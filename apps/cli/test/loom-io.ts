import { PassThrough } from 'node:stream';
import { run } from '../src/run';

/** What `loom ARGV` printed, and its exit status. */
export interface LoomResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

function collector(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

/** Runs `loom ARGV` in this process, relative paths against `cwd` (as INIT_CWD). */
export async function loom(cwd: string, ...argv: string[]): Promise<LoomResult> {
  const stdout = collector();
  const stderr = collector();
  const status = await run(argv, {
    stdin: new PassThrough(),
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { INIT_CWD: cwd },
    signal: new AbortController().signal,
  });
  await new Promise((resolve) => setImmediate(resolve));
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}
