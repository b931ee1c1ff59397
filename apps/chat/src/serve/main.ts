import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'vite';
import { modelFilesIn, serveChat } from './static-server';

const USAGE = `pnpm start [--model PATH] [--port N] [--host ADDRESS]

Serves the chat page with a model preloaded, and prints its URL.
  --model PATH   a Loom checkpoint directory, or a model's files (default: out/latest, trained first if missing)
  --port N       port to listen on (default 5180; 0 picks a free one)
  --host ADDRESS interface to listen on (default 127.0.0.1)`;

const appDir = resolve(import.meta.dirname, '../..');
/** Where pnpm was run: relative paths are taken from there, as the trainer does. */
const baseDir = process.env.INIT_CWD ?? process.cwd();

function fail(message: string): never {
  console.error(`pnpm start: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse() {
  try {
    const { values } = parseArgs({
      options: {
        model: { type: 'string' },
        port: { type: 'string', default: '5180' },
        host: { type: 'string', default: '127.0.0.1' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    return values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

/** Runs the trainer's demo into `out` (about 80 s on 2 cores). */
function trainDemo(out: string): void {
  console.log(`No trained checkpoint at ${out}: training the demo model first (pnpm train --out ${out}).`);
  const result = spawnSync('pnpm', ['--filter', '@loom/trainer', 'run', 'train', '--out', out], {
    cwd: resolve(appDir, '../..'),
    stdio: 'inherit',
  });
  if (result.status !== 0) fail(`the demo training failed (exit ${result.status ?? result.signal})`);
}

/** Removes the page's build folder when the server stops, by Ctrl-C, by a kill or by an error. */
function removeOnExit(dir: string): void {
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  // A signal's default action ends the process without 'exit'; 128 + the signal's number, as a shell reports it.
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

async function main(): Promise<void> {
  const args = parse();
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--port must be an integer in [0, 65535], got ${args.port}`);
  const model = resolve(baseDir, args.model ?? 'out/latest');
  if (!existsSync(join(model, 'config.json')) && !(args.model && existsSync(model))) {
    if (args.model !== undefined)
      fail(`--model ${args.model}: no such file or checkpoint directory (${model})`);
    trainDemo(model);
  }
  const outDir = mkdtempSync(join(tmpdir(), 'loom-chat-'));
  removeOnExit(outDir);
  await build({ root: appDir, logLevel: 'error', build: { outDir, emptyOutDir: true } });
  const modelFiles = modelFilesIn(model);
  const server = await serveChat({ root: outDir, modelFiles, port, host: args.host });
  const address = server.address();
  const bound = address !== null && typeof address === 'object' ? address.port : port;
  console.log(`Loom chat with ${model} (${modelFiles.length} files): http://${args.host}:${bound}/`);
}

await main();
