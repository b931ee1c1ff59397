import { COMMANDS } from './commands';
import type { LoomIo } from './io';

export const USAGE = [
  'usage: loom <command> [flags]     loom <command> --help shows its flags',
  '',
  'commands:',
  ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`),
  '',
  'Exit status: 0 done, 1 failed, 2 bad usage. Relative paths start where pnpm or npx was run (INIT_CWD).',
].join('\n');

/** The command named first in `argv`, if there is one by that name. */
export function commandOf(argv: readonly string[]): (typeof COMMANDS)[string] | undefined {
  const [name] = argv;
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

/** Runs `loom ARGV` in this process; resolves to the exit status. */
export async function run(argv: readonly string[], io: LoomIo): Promise<number> {
  const [name, ...rest] = argv[0] === '--' ? argv.slice(1) : argv;
  if (name === '--help' || name === '-h') {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === 'help' && rest.length === 0) return run(['--help'], io);
  if (name === 'help') return run([rest[0], '--help'], io);
  const command = commandOf([name ?? '']);
  if (command === undefined) {
    const names = Object.keys(COMMANDS).join(', ');
    const problem = name === undefined ? 'expected a command' : `unknown command ${JSON.stringify(name)}`;
    io.stderr.write(`loom: ${problem} (${names}); see loom --help\n`);
    return 2;
  }
  return command.run(rest, io);
}
