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
  return `usage: pnpm bench <suite> [--backend cpu|webgpu] [--json out.json] [suite flags]\n       pnpm bench <suite> --help\nsuites:\n${names}`;
}

function suiteUsage(suite: Suite): string {
  return `usage: pnpm bench ${suite.name} [--backend cpu|webgpu] [--json out.json] ${suite.usage}\n${suite.description}`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv[0] === '--' ? argv.slice(1) : argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const suite = suites.find((s) => s.name === name);
  if (!suite)
    throw new UsageError(`unknown suite ${JSON.stringify(name)}; run pnpm bench --help for the list`);
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
      `${error instanceof Error ? error.message : String(error)}; see pnpm bench ${suite.name} --help`,
    );
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    console.log(suiteUsage(suite));
    return 0;
  }
  const backend = values.backend;
  if (backend !== 'cpu' && backend !== 'webgpu') {
    throw new UsageError(`--backend: expected cpu or webgpu, got ${JSON.stringify(backend)}`);
  }
  const options: SuiteOptions = { backend, values, positionals };
  const result = await suite.run(options);
  console.log(formatTable(result));
  if (typeof values.json === 'string') {
    writeFileSync(values.json, `${JSON.stringify({ suite: suite.name, backend, ...result }, null, 2)}\n`);
    console.log(`wrote ${values.json}`);
  }
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`bench: ${message}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
