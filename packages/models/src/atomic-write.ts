import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Called after each chunk is written with the bytes written so far; for progress (and fault-injection tests). */
  onProgress?: (written: number, total: number) => void;
}

/** A file written and flushed under a temporary name beside its target, not yet renamed over it. */
export interface StagedFile {
  readonly target: string;
  readonly temp: string;
}

const CHUNK_BYTES = 1 << 24;

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A new temporary name beside `target`: `<target>.tmp-<pid>-<12 hex digits>`. The writer's pid in the name lets a
 * later save tell the leftover of a killed writer from a file another process is still writing.
 */
export function tempName(target: string): string {
  return `${target}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** Whether a process with this pid runs on this machine (one of another user counts: signalling it is refused). */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/** The `<pid>-<12 hex digits>` tail that `tempName` puts after `<target>.tmp-`. */
const TEMP_TAIL = /^(\d+)-[0-9a-f]{12}$/;

/**
 * Removes the temporary files of `target` (see `tempName`) that processes which no longer run left beside it — a
 * save killed before its rename. Files of this process and of live ones are kept, as are other targets' files.
 * Pids are of this machine: writers on other hosts sharing the directory need a directory lock (`lockDirectory`).
 */
export function removeStaleTemps(target: string): void {
  const directory = dirname(target);
  const prefix = `${basename(target)}.tmp-`;
  for (const name of readdirSync(directory)) {
    const tail = name.startsWith(prefix) ? TEMP_TAIL.exec(name.slice(prefix.length)) : null;
    if (tail === null) continue;
    const pid = Number(tail[1]);
    if (pid !== process.pid && !processAlive(pid)) rmSync(join(directory, name), { force: true });
  }
}

/**
 * Writes `bytes` to `tempName(target)` in the target's directory and flushes it to disk (fsync). On any
 * failure the temporary file is removed and the target is untouched.
 */
export function stageFile(target: string, bytes: Uint8Array, options: AtomicWriteOptions = {}): StagedFile {
  const temp = tempName(target);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx');
    let written = 0;
    while (written < bytes.length) {
      written += writeSync(fd, bytes, written, Math.min(CHUNK_BYTES, bytes.length - written));
      options.onProgress?.(written, bytes.length);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw new Error(
      `${target}: writing failed (${reasonOf(error)}); the existing file, if any, is unchanged`,
      {
        cause: error,
      },
    );
  }
  return { target, temp };
}

/** Flushes a directory's entries (the renames in it) to disk; Windows cannot open directories, so it is skipped there. */
export function syncDirectory(directory: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Renames a staged file over its target (atomic on POSIX file systems), then removes the target's temporary files
 * that dead writers left (`removeStaleTemps`).
 */
export function commitFile(staged: StagedFile): void {
  renameSync(staged.temp, staged.target);
  try {
    removeStaleTemps(staged.target);
  } catch {
    // Housekeeping only: the file is in place; a leftover that cannot be removed now is tried again next save.
  }
}

/** Removes a staged file that will not be committed. */
export function discardFile(staged: StagedFile): void {
  rmSync(staged.temp, { force: true });
}

/**
 * Replaces `target` with `bytes` atomically: the data goes to a temporary file in the same directory, is flushed,
 * then renamed over the target. A crash or error at any point leaves either the old file or the new one, never a
 * mixture (a crash may leave a stray `*.tmp-*` file behind, which the next successful write of the target removes).
 */
export function writeFileAtomic(target: string, bytes: Uint8Array, options: AtomicWriteOptions = {}): void {
  const staged = stageFile(target, bytes, options);
  try {
    commitFile(staged);
  } catch (error) {
    discardFile(staged);
    throw new Error(`${target}: could not rename the written data into place (${reasonOf(error)})`, {
      cause: error,
    });
  }
  syncDirectory(dirname(target));
}
