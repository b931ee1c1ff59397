import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCase } from './case-files';
import { makeCase } from './make-case';
import { runCase } from './run-case';
import { buildSeeds } from './seeds';

/**
 * A child process that runs cases one after another and prints a JSON line before and after each, so that the
 * parent knows which case was running if this process is killed (memory, time) or dies.
 * `--seed S --from A --to B` runs generated cases A..B-1; `--replay DIR...` runs saved cases.
 */
export type WorkerLine =
  | { readonly start: number }
  | {
      readonly done: number;
      readonly outcome: string;
      readonly message?: string;
      readonly peakRssBytes: number;
    };

function say(line: WorkerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const { values, positionals } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: '0' },
    scratch: { type: 'string' },
    replay: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const scratch = values.scratch ?? mkdtempSync(join(tmpdir(), 'loom-fuzz-'));
const seeds = buildSeeds();
const jobs: number[] = values.replay
  ? positionals.map((_, i) => i)
  : Array.from({ length: Number(values.to) - Number(values.from) }, (_, i) => Number(values.from) + i);
for (const index of jobs) {
  say({ start: index });
  const testCase = values.replay ? loadCase(positionals[index]) : makeCase(seeds, Number(values.seed), index);
  const outcome = runCase(testCase, join(scratch, 'case'));
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  say({
    done: index,
    outcome: outcome.kind,
    ...('message' in outcome ? { message: outcome.message } : {}),
    peakRssBytes,
  });
}
rmSync(scratch, { recursive: true, force: true });
