import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { WorkerLine } from './worker';

export interface FuzzLimits {
  /** Peak resident memory a case may reach, in bytes (the child's whole process, Node itself included). */
  readonly memoryBytes: number;
  /** Wall-clock time a case may take, in milliseconds. */
  readonly caseMs: number;
}

export const DEFAULT_LIMITS: FuzzLimits = { memoryBytes: 512 * 1024 ** 2, caseMs: 10_000 };

/** What to run: generated cases `0..cases-1` of a seed, or saved case folders. */
export type FuzzJob =
  | { readonly kind: 'generated'; readonly seed: number; readonly cases: number; readonly workers: number }
  | { readonly kind: 'replay'; readonly dirs: readonly string[] };

/** A case that did not end in a valid load or a clear error within the limits. */
export interface Finding {
  readonly index: number;
  readonly problem: string;
}

export interface FuzzReport {
  readonly cases: number;
  readonly loaded: number;
  readonly refused: number;
  readonly findings: readonly Finding[];
  readonly peakRssBytes: number;
}

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const POLL_MS = 20;

/** The resident memory of a live process, from /proc (Linux), or 0 once it has gone. */
function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

interface Tally {
  cases: number;
  loaded: number;
  refused: number;
  peakRssBytes: number;
  readonly findings: Finding[];
}

function spawnWorker(args: readonly string[], scratch: string): ChildProcess {
  const heapMb = Math.floor(DEFAULT_LIMITS.memoryBytes / 1024 ** 2);
  return spawn(
    process.execPath,
    [
      `--max-old-space-size=${heapMb}`,
      '--conditions=@loom/source',
      '--import',
      'tsx',
      WORKER,
      '--scratch',
      scratch,
      ...args,
    ],
    { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/**
 * Runs cases `from..to-1` (indices into the job) in one child, watching each case's time and the child's memory;
 * when the child is killed or dies, the case it was running is a finding and a fresh child goes on after it.
 */
async function runRange(
  job: FuzzJob,
  from: number,
  to: number,
  limits: FuzzLimits,
  tally: Tally,
): Promise<void> {
  let next = from;
  while (next < to) {
    const scratch = await mkdtemp(join(tmpdir(), 'loom-fuzz-'));
    const args =
      job.kind === 'generated'
        ? ['--seed', String(job.seed), '--from', String(next), '--to', String(to)]
        : ['--replay', ...job.dirs.slice(next, to)];
    const offset = job.kind === 'generated' ? 0 : next;
    const child = spawnWorker(args, scratch);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    let running: number | undefined;
    let startedAt = 0;
    let killedFor: string | undefined;
    const watch = setInterval(() => {
      if (running === undefined || child.pid === undefined) return;
      const rss = residentBytes(child.pid);
      if (rss > limits.memoryBytes)
        killedFor = `used ${rss} bytes, over the ${limits.memoryBytes}-byte limit`;
      else if (performance.now() - startedAt > limits.caseMs) killedFor = `ran over ${limits.caseMs} ms`;
      if (killedFor !== undefined) child.kill('SIGKILL');
    }, POLL_MS);
    const exited = new Promise<string>((resolve) => {
      child.on('close', (code, signal) =>
        resolve(signal === null ? `exited with code ${code}` : `was killed by ${signal}`),
      );
    });
    for await (const text of createInterface({ input: child.stdout ?? process.stdin })) {
      const line = JSON.parse(text) as WorkerLine;
      if ('start' in line) {
        running = line.start + offset;
        startedAt = performance.now();
        continue;
      }
      const index = line.done + offset;
      running = undefined;
      next = index + 1;
      tally.cases++;
      tally.peakRssBytes = Math.max(tally.peakRssBytes, line.peakRssBytes);
      if (line.outcome === 'loaded') tally.loaded++;
      else if (line.outcome === 'refused') tally.refused++;
      else tally.findings.push({ index, problem: `unclear error: ${line.message}` });
      if (line.peakRssBytes > limits.memoryBytes) {
        tally.findings.push({
          index,
          problem: `peak memory ${line.peakRssBytes} bytes, over ${limits.memoryBytes}`,
        });
        // The peak only grows, so later cases would be blamed for it: a fresh child goes on.
        killedFor = 'its peak memory';
        child.kill('SIGKILL');
        break;
      }
    }
    const how = await exited;
    clearInterval(watch);
    await rm(scratch, { recursive: true, force: true });
    if (running !== undefined) {
      tally.cases++;
      tally.findings.push({
        index: running,
        problem: killedFor ?? `the process ${how}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`,
      });
      next = running + 1;
    } else if (next < to && killedFor === undefined && !how.endsWith('code 0')) {
      throw new Error(`fuzz worker ${how} outside any case: ${stderr.trim()}`);
    }
  }
}

/** Runs a fuzz job over child processes under `limits`, and tallies how every case ended. */
export async function runFuzz(job: FuzzJob, limits: FuzzLimits = DEFAULT_LIMITS): Promise<FuzzReport> {
  const tally: Tally = { cases: 0, loaded: 0, refused: 0, peakRssBytes: 0, findings: [] };
  const total = job.kind === 'generated' ? job.cases : job.dirs.length;
  const workers = job.kind === 'generated' ? Math.max(1, job.workers) : 1;
  const share = Math.ceil(total / workers);
  const ranges = Array.from(
    { length: workers },
    (_, w) => [w * share, Math.min(total, (w + 1) * share)] as const,
  );
  await Promise.all(
    ranges.filter(([from, to]) => from < to).map(([from, to]) => runRange(job, from, to, limits, tally)),
  );
  tally.findings.sort((a, b) => a.index - b.index);
  return tally;
}
