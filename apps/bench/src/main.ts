import { writeFileSync } from 'node:fs';
import type { SuiteOptions } from './suite';
import { suites } from './suites/index';
import { formatTable } from './table';

function usage(): string {
  const names = suites.map((s) => `  ${s.name.padEnd(12)} ${s.description}`).join('\n');
  return `usage: pnpm bench <suite> [--backend cpu|webgpu] [--json out.json]\nsuites:\n${names}`;
}

async function main(argv: readonly string[]): Promise<void> {
  const positional: string[] = [];
  let backend: SuiteOptions['backend'] = 'cpu';
  let jsonPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--backend') {
      const value = argv[++i];
      if (value !== 'cpu' && value !== 'webgpu') {
        throw new Error(`--backend: expected cpu or webgpu, got ${JSON.stringify(value)}`);
      }
      backend = value;
    } else if (arg === '--json') {
      jsonPath = argv[++i];
      if (!jsonPath) throw new Error('--json: expected an output path, e.g. --json out.json');
    } else if (arg === '--') {
    } else {
      positional.push(arg);
    }
  }
  const [name, ...args] = positional;
  const suite = suites.find((s) => s.name === name);
  if (!suite) {
    console.error(name ? `unknown suite ${JSON.stringify(name)}\n${usage()}` : usage());
    process.exitCode = 2;
    return;
  }
  const result = await suite.run({ backend, args });
  console.log(formatTable(result));
  if (jsonPath) {
    writeFileSync(jsonPath, `${JSON.stringify({ suite: suite.name, backend, ...result }, null, 2)}\n`);
    console.log(`wrote ${jsonPath}`);
  }
}

await main(process.argv.slice(2));
