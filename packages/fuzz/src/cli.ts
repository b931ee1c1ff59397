import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { saveCase } from './case-files';
import { makeCase } from './make-case';
import { type FuzzJob, runFuzz } from './run';
import { buildSeeds } from './seeds';

const USAGE = `usage: pnpm --filter @loom/fuzz fuzz [--cases N] [--seed S] [--workers W] [--save DIR] [--replay DIR]
  --cases    generated cases to run (default 3000)
  --seed     seed of the run (default 1); the same seed gives the same cases
  --workers  child processes at once (default 2)
  --save     write each finding's input files to a folder of DIR, ready to keep as a regression case
  --replay   run every saved case folder in DIR instead of generated cases`;

function count(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`fuzz: --${flag} must be a non-negative integer, got "${text}"\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

const OPTIONS = {
  cases: { type: 'string', default: '3000' },
  seed: { type: 'string', default: '1' },
  workers: { type: 'string', default: '2' },
  save: { type: 'string' },
  replay: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function flags() {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (error) {
    console.error(`fuzz: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
}

const values = flags();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const seed = count(values.seed, 'seed');
const job: FuzzJob =
  values.replay === undefined
    ? {
        kind: 'generated',
        seed,
        cases: count(values.cases, 'cases'),
        workers: count(values.workers, 'workers'),
      }
    : { kind: 'replay', dirs: readdirSync(values.replay).map((name) => join(values.replay ?? '', name)) };
const start = performance.now();
const report = await runFuzz(job);
const seconds = ((performance.now() - start) / 1000).toFixed(1);
console.log(
  `fuzz: ${report.cases} cases in ${seconds} s: ${report.loaded} loaded, ${report.refused} refused clearly, ` +
    `${report.findings.length} findings; peak memory of a case ${(report.peakRssBytes / 1024 ** 2).toFixed(0)} MB`,
);
const seeds = buildSeeds();
for (const finding of report.findings) {
  console.log(`  case ${finding.index}: ${finding.problem}`);
  if (values.save !== undefined && job.kind === 'generated') {
    const testCase = makeCase(seeds, seed, finding.index);
    saveCase(join(values.save, `${testCase.seed}-${seed}-${finding.index}`), testCase, finding.problem);
  }
}
process.exitCode = report.findings.length > 0 ? 1 : 0;
