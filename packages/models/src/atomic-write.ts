import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

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
 * Writes `bytes` to `<target>.tmp-<pid>-<random>` in the target's directory and flushes it to disk (fsync). On any
 * failure the temporary file is removed and the target is untouched.
 */
export function stageFile(target: string, bytes: Uint8Array, options: AtomicWriteOptions = {}): StagedFile {
  const temp = `${target}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
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

/** Renames a staged file over its target (atomic on POSIX file systems). */
export function commitFile(staged: StagedFile): void {
  renameSync(staged.temp, staged.target);
}

/** Removes a staged file that will not be committed. */
export function discardFile(staged: StagedFile): void {
  rmSync(staged.temp, { force: true });
}

/**
 * Replaces `target` with `bytes` atomically: the data goes to a temporary file in the same directory, is flushed,
 * then renamed over the target. A crash or error at any point leaves either the old file or the new one, never a
 * mixture (a crash may leave a stray `*.tmp-*` file behind).
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
