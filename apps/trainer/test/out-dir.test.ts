import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRun } from '../src/checkpoint';
import { main } from '../src/cli';
import { collectingIO, smallCorpus, TINY_QUIET } from './helpers';

const LOCK = '.lock';
const trainerDir = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/**
 * `pnpm train` in a child process, training long enough to be stopped by a signal; resolves
 * once it holds the lock on `out`.
 */
async function startTrainer(data: string, out: string): Promise<ChildProcess> {
  const argv = ['--data', data, ...TINY_QUIET, '--iters', '1000000', '--eval-every', '0', '--out', out];
  const child = spawn(
    process.execPath,
    ['--conditions=@loom/source', '--import', 'tsx', 'src/main.ts', ...argv],
    { cwd: trainerDir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  while (!existsSync(join(out, LOCK)) && child.exitCode === null && child.signalCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(child.exitCode, stderr).toBe(null);
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

describe('the output directory', () => {
  it('is refused while another trainer uses it, naming that trainer', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const first = await startTrainer(data, out);
    const { startedAt } = JSON.parse(readFileSync(join(out, LOCK), 'utf8'));
    const second = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, '--iters', '1', '--out', out];
    expect(await main(argv, second.io, { baseDir: dir })).toBe(1);
    expect(second.stderr.text).toBe(
      `train: ${out} is in use by another trainer (pid ${first.pid}, started ${startedAt}); wait for it or pick another --out\n`,
    );
    const end = exited(first);
    first.kill('SIGTERM');
    expect(await end).toEqual({ code: 143, signal: null });
    expect(existsSync(join(out, LOCK)), 'SIGTERM releases the lock').toBe(false);
  });

  it('takes over the lock a killed trainer left', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const killed = await startTrainer(data, out);
    const end = exited(killed);
    killed.kill('SIGKILL');
    expect(await end).toEqual({ code: null, signal: 'SIGKILL' });
    expect(JSON.parse(readFileSync(join(out, LOCK), 'utf8')).pid).toBe(killed.pid);
    const { io, stderr } = collectingIO();
    const argv = ['--data', data, ...TINY_QUIET, '--iters', '1', '--out', out];
    expect(await main(argv, io, { baseDir: dir }), stderr.text).toBe(0);
    expect(stderr.text).toMatch(
      new RegExp(
        `${out}: taking over the lock of pid ${killed.pid} \\(started [^)]+\\), which no longer runs\\n`,
      ),
    );
    expect(existsSync(join(out, LOCK)), 'released after the run').toBe(false);
  });

  it('drops the temporary files a killed save left at the next checkpoint, which stays intact', async () => {
    const { dir, data } = smallCorpus();
    const out = join(dir, 'run');
    const argv = ['--data', data, ...TINY_QUIET, '--iters', '1', '--out', out];
    expect(await main(argv, collectingIO().io, { baseDir: dir })).toBe(0);
    const files = readdirSync(out).sort();
    const pid = deadPid();
    const stale = [`model.safetensors.tmp-${pid}-0123456789ab`, `trainer-state.json.tmp-${pid}-ba9876543210`];
    for (const name of stale) writeFileSync(join(out, name), new Uint8Array(49_000));
    expect(await main(['--resume', out, '--iters', '2'], collectingIO().io, { baseDir: dir })).toBe(0);
    expect(readdirSync(out).sort()).toEqual(files);
    expect(loadRun(out).state.step).toBe(2);
  });
});
