import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE, type LockHolder, lockDirectory } from '../src/index';
import { errorOf, tempDir } from './helpers';

const options = { holderName: 'another trainer', remedy: 'wait for it or pick another --out' };

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  expect(child.status).toBe(0);
  return child.pid;
}

function lockText(holder: LockHolder): string {
  return `${JSON.stringify(holder)}\n`;
}

function holder(pid: number, host = hostname()): LockHolder {
  return { pid, hostname: host, startedAt: '2024-05-01T10:00:00.000Z', argv: ['node', 'train'] };
}

describe('lockDirectory', () => {
  it('creates the directory and a lock naming this process; a second taker is refused until release', () => {
    const dir = join(tempDir(), 'run');
    const lock = lockDirectory(dir, options);
    expect(lock.path).toBe(join(dir, LOCK_FILE));
    const held = JSON.parse(readFileSync(lock.path, 'utf8'));
    expect(held).toMatchObject({ pid: process.pid, hostname: hostname(), argv: process.argv });
    expect(errorOf(() => lockDirectory(dir, options))).toBe(
      `${dir} is in use by another trainer (pid ${process.pid}, started ${held.startedAt}); wait for it or pick another --out`,
    );
    lock.release();
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    lockDirectory(dir, options).release();
  });

  it('takes over a lock whose process no longer runs, and says so', () => {
    const dir = tempDir();
    const pid = deadPid();
    writeFileSync(join(dir, LOCK_FILE), lockText(holder(pid)));
    writeFileSync(join(dir, `${LOCK_FILE}.tmp-${pid}-0123456789ab`), 'left by a killed taker');
    const told: LockHolder[] = [];
    const lock = lockDirectory(dir, { ...options, onStaleTakeover: (stale) => told.push(stale) });
    expect(told).toEqual([holder(pid)]);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).pid).toBe(process.pid);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
  });

  it('refuses a lock from another host, and a file that is not a lock, naming what to do', () => {
    const dir = tempDir();
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, lockText(holder(deadPid(), 'elsewhere.example')));
    expect(errorOf(() => lockDirectory(dir, options))).toMatch(
      /is in use by another trainer on host elsewhere\.example \(pid \d+, started 2024-05-01T10:00:00\.000Z\); wait for it or pick another --out — or, if it no longer runs there, delete .*\.lock$/,
    );
    writeFileSync(path, 'garbage');
    expect(errorOf(() => lockDirectory(dir, options))).toBe(
      `${path}: expected a lock file (JSON with pid, hostname, startedAt, argv), got "garbage"; if no process uses ${dir}, delete it`,
    );
  });

  it('release leaves a lock that is no longer its own', () => {
    const dir = tempDir();
    const lock = lockDirectory(dir, options);
    const other = lockText(holder(process.ppid));
    writeFileSync(lock.path, other);
    lock.release();
    expect(readFileSync(lock.path, 'utf8')).toBe(other);
  });

  it('is released when the process exits without releasing it', () => {
    const dir = tempDir();
    const script = join(tempDir(), 'take-lock.mts');
    const source = fileURLToPath(new URL('../src/dir-lock.ts', import.meta.url));
    writeFileSync(
      script,
      `import { lockDirectory } from ${JSON.stringify(source)};\n` +
        `lockDirectory(process.argv[2], { holderName: 'a test', remedy: 'wait' });\n` +
        `console.log(process.argv[2]);\nprocess.exit(3);\n`,
    );
    const cwd = fileURLToPath(new URL('..', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script, dir], { cwd, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe(`${dir}\n`);
    expect(child.status).toBe(3);
    expect(readdirSync(dir)).toEqual([]);
  });
});
