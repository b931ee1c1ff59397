import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type FlagSpec, UsageError } from './flags';
import type { Suite, SuiteOptions } from './suite';
import { suites } from './suites/index';
import { formatTable } from './table';

const COMMON_FLAGS: FlagSpec = {
  backend: { type: 'string', short: 'b', default: 'cpu' },
  json: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

function usage(): string {
  const names = suites.map((s) => `  ${s.name.padEnd(10)} ${s.description}`).join('\n');
  return `usage: loom bench <suite> [--backend cpu|webgpu] [--json out.json] [suite flags]\n       loom bench <suite> --help\nsuites:\n${names}`;
}

function suiteUsage(suite: Suite): string {
  return `usage: loom bench ${suite.name} [--backend cpu|webgpu] [--json out.json] ${suite.usage}\n${suite.description}`;
}

/** Where the bench writes its tables and messages. */
export interface BenchIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

async function run(argv: readonly string[], io: BenchIo): Promise<number> {
  const [name, ...rest] = argv[0] === '--' ? argv.slice(1) : argv;
  if (name === undefined) {
    const names = suites.map((s) => s.name).join(', ');
    throw new UsageError(`expected a suite (${names}); see loom bench --help`);
  }
  if (name === '--help' || name === '-h') {
    io.stdout(`${usage()}\n`);
    return 0;
  }
  const suite = suites.find((s) => s.name === name);
  if (!suite)
    throw new UsageError(`unknown suite ${JSON.stringify(name)}; run loom bench --help for the list`);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...COMMON_FLAGS, ...suite.flags },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(
      `${error instanceof Error ? error.message : String(error)}; see loom bench ${suite.name} --help`,
    );
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.stdout(`${suiteUsage(suite)}\n`);
    return 0;
  }
  const backend = values.backend;
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new UsageError(`--backend: expected cpu or webgpu, got ${JSON.stringify(backend)}`);
  }
  const options: SuiteOptions = { backend, values, positionals };
  const result = await suite.run(options);
  io.stdout(`${formatTable(result)}\n`);
  if (typeof values.json === 'string') {
    writeFileSync(values.json, `${JSON.stringify({ suite: suite.name, backend, ...result }, null, 2)}\n`);
    io.stdout(`wrote ${values.json}\n`);
  }
  return 0;
}

/** Runs `loom bench` with these arguments; returns the exit status (0 done, 1 failed, 2 bad usage). */
export async function main(argv: readonly string[], io: BenchIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`bench: ${message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
