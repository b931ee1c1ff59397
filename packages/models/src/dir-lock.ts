import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { discardFile, processAlive, removeStaleTemps, stageFile, tempName } from './atomic-write';

/** The lock file `lockDirectory` creates in the directory. */
export const LOCK_FILE = '.lock';

/** Who holds a directory lock: the JSON text of the lock file. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** ISO 8601 time the lock was taken. */
  readonly startedAt: string;
  readonly argv: readonly string[];
}

export interface LockOptions {
  /** Who the holder is, for the refusal: "another trainer" gives "DIR is in use by another trainer (pid …)". */
  readonly holderName: string;
  /** What the refused caller can do, e.g. "wait for it or pick another --out". */
  readonly remedy: string;
  /** Told after a lock left by a process that no longer runs was taken over. */
  readonly onStaleTakeover?: (stale: LockHolder) => void;
}

/** An exclusive lock on a directory, held until `release` (or the process exits). */
export interface DirectoryLock {
  readonly path: string;
  /** Removes the lock file if it is still this lock's; safe to call more than once. */
  release(): void;
}

const errorCode = (error: unknown): unknown =>
  error instanceof Error && 'code' in error ? error.code : undefined;

/** A lock file's text and holder, or undefined when there is none (any more). */
function readLock(path: string, dir: string): { text: string; holder: LockHolder } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  let holder: Partial<LockHolder> | null | undefined;
  try {
    holder = JSON.parse(text);
  } catch {
    holder = undefined;
  }
  if (
    typeof holder !== 'object' ||
    holder === null ||
    !Number.isSafeInteger(holder.pid) ||
    typeof holder.hostname !== 'string' ||
    typeof holder.startedAt !== 'string' ||
    !Array.isArray(holder.argv)
  ) {
    throw new Error(
      `${path}: expected a lock file (JSON with pid, hostname, startedAt, argv), got ${JSON.stringify(text.slice(0, 80))}; if no process uses ${dir}, delete it`,
    );
  }
  return { text, holder: holder as LockHolder };
}

/** Creates the lock file holding `text`, complete from its first moment (a hard link to a flushed file); false if one exists. */
function createLock(path: string, text: string): boolean {
  const staged = stageFile(path, new TextEncoder().encode(text));
  try {
    linkSync(staged.temp, path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    discardFile(staged);
  }
}

/**
 * Removes the lock file if it still holds `text` (the stale lock judged dead). It is renamed aside first — only one
 * process can move a given file — and checked there: a fresh lock another process put in its place meanwhile is
 * linked back.
 */
function removeIfUnchanged(path: string, text: string): boolean {
  const aside = tempName(path);
  try {
    renameSync(path, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  try {
    if (readFileSync(aside, 'utf8') === text) return true;
    try {
      linkSync(aside, path);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    return false;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** Attempts to take the lock; more are needed only while other processes race for the same stale lock. */
const ATTEMPTS = 5;

/**
 * Takes an exclusive lock on `dir` (created if needed): the file `dir/.lock` holding this process's pid, host, start
 * time and argv, created atomically. When another live process on this host holds it, throws
 * "`dir` is in use by `holderName` (pid N, started T); `remedy`". A lock whose process no longer runs (killed) is
 * taken over, and `onStaleTakeover` is told. A lock from another host is refused: its pid cannot be checked here.
 * The lock is released by `release()` or when the process exits (process.exit included; not SIGKILL — the next
 * run takes that stale lock over).
 */
export function lockDirectory(dir: string, options: LockOptions): DirectoryLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const mine: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    argv: process.argv,
  };
  const text = `${JSON.stringify(mine)}\n`;
  let stale: LockHolder | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createLock(path, text)) {
      removeStaleTemps(path);
      if (stale !== undefined) options.onStaleTakeover?.(stale);
      return heldLock(path, text);
    }
    const found = readLock(path, dir);
    if (found === undefined) continue;
    const { pid, startedAt } = found.holder;
    if (found.holder.hostname !== mine.hostname) {
      throw new Error(
        `${dir} is in use by ${options.holderName} on host ${found.holder.hostname} (pid ${pid}, started ${startedAt}); ${options.remedy} — or, if it no longer runs there, delete ${path}`,
      );
    }
    if (processAlive(pid)) {
      throw new Error(
        `${dir} is in use by ${options.holderName} (pid ${pid}, started ${startedAt}); ${options.remedy}`,
      );
    }
    if (removeIfUnchanged(path, found.text)) stale = found.holder;
  }
  throw new Error(
    `${dir}: could not take the lock ${path} in ${ATTEMPTS} attempts, other processes kept taking it; try again`,
  );
}

function heldLock(path: string, text: string): DirectoryLock {
  const release = (): void => {
    process.off('exit', release);
    if (existsSync(path) && readFileSync(path, 'utf8') === text) rmSync(path, { force: true });
  };
  process.on('exit', release);
  return { path, release };
}
