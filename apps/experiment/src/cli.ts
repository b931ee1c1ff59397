import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Experiment } from './experiment';
import { experiments } from './experiments/index';

export interface ExperimentIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

function usage(): string {
  const names = experiments.map((e) => `  ${e.name.padEnd(10)} ${e.description}`).join('\n');
  return [
    'usage: pnpm experiment <name> [--out DIR] [--quick] [--seed N]',
    '  --out DIR   where report.md and its SVG charts go (default: experiments/<name>)',
    '  --quick     a tiny run, for checking that the experiment works (its figures mean little)',
    '  --seed N    seed of the weights and data order (default 1)',
    '  --data FILE a text file to train on instead of the built-in stories (rank, arch)',
    `experiments:\n${names}`,
  ].join('\n');
}

const OPTIONS = {
  out: { type: 'string' },
  quick: { type: 'boolean' },
  seed: { type: 'string' },
  data: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(args: string[]) {
  return parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
}

/** Runs `pnpm experiment …`; returns the exit status (2 for a usage error). */
export async function main(
  argv: readonly string[],
  io: ExperimentIo,
  baseDir = process.cwd(),
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv[0] === '--' ? argv.slice(1) : [...argv]);
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n${usage()}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${usage()}\n`);
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr(`expected one experiment name, got ${positionals.length}\n${usage()}\n`);
    return 2;
  }
  const experiment: Experiment | undefined = experiments.find((e) => e.name === positionals[0]);
  if (!experiment) {
    const names = experiments.map((e) => e.name).join(', ');
    io.stderr(`unknown experiment ${JSON.stringify(positionals[0])}; expected one of ${names}\n`);
    return 2;
  }
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    io.stderr(`--seed must be a non-negative integer, got ${JSON.stringify(values.seed)}\n`);
    return 2;
  }
  const started = performance.now();
  const report = await experiment.run({
    scale: values.quick ? 'quick' : 'default',
    seed,
    data: values.data === undefined ? undefined : resolve(baseDir, values.data),
    log: (line) => io.stderr(`${line}\n`),
  });
  const minutes = (performance.now() - started) / 60_000;
  report.paragraph(
    `_Ran in ${minutes.toFixed(1)} minutes (${values.quick ? 'quick' : 'default'} size, seed ${seed})._`,
  );
  const path = report.write(resolve(baseDir, values.out ?? `experiments/${experiment.name}`));
  io.stdout(`${report.markdown()}\nwrote ${path}\n`);
  return 0;
}
