import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `pnpm ARGS` at the repository root, as a user would. */
function pnpm(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync('pnpm', args, { cwd: root, encoding: 'utf8' });
  return { status, stdout, stderr };
}

/** stderr less pnpm's own lines: the `$ command` echo and the `[ELIFECYCLE]` line pnpm 12 adds to a failure. */
function ownLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('$ ') && !/ELIFECYCLE/.test(line));
}

describe('the root pnpm scripts', () => {
  it('pass the exit status 2 of bad usage through, with the one line loom wrote', () => {
    for (const [script, line] of [
      ['generate', 'generate: unknown argument "--bogus"; see loom generate --help'],
      ['train', 'train: unknown flag --bogus; see loom train --help'],
      ['tokenize', 'tokenize: unknown flag --bogus; expected one of'],
      ['bench', 'bench: unknown suite "--bogus"; run loom bench --help for the list'],
    ] as const) {
      const result = pnpm(script, '--bogus');
      expect(result.status, script).toBe(2);
      const lines = ownLines(result.stderr);
      expect(lines, script).toHaveLength(1);
      expect(lines[0].startsWith(line), lines[0]).toBe(true);
    }
  });

  it('reach each command, help included (pnpm bench --help is the bench’s help, not pnpm’s)', () => {
    const bench = pnpm('bench', '--help');
    expect(bench.status).toBe(0);
    expect(bench.stdout).toContain('usage: loom bench <suite>');
    const loom = pnpm('loom', '--help');
    expect(loom.status).toBe(0);
    expect(loom.stdout).toMatch(/^ {2}convert +/m);
  });
});
