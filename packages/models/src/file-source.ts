import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import type { ByteSource } from './byte-source';

/** Positioned reads go in chunks of at most this many bytes (readSync's own limit is 2 GiB). */
const CHUNK_BYTES = 1 << 30;

/** What a path is, for an error about something that is not a regular file. */
function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Throws, naming the path, unless it is an existing regular file; returns its stats. */
export function statRegularFile(path: string, what: string): Stats {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    throw new Error(`${path}: no such file (expected ${what})`);
  }
  if (!stats.isFile()) throw new Error(`${path}: is ${kindOf(stats)}; expected ${what}, a regular file`);
  return stats;
}

/**
 * Opens a regular file for positioned reads and runs `use` on it, closing it after. A FIFO,
 * device or directory is refused before it is opened for reading (opening a FIFO would block).
 */
export function withFileSource<T>(path: string, what: string, use: (source: ByteSource) => T): T {
  statRegularFile(path, what);
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error(`${path}: is ${kindOf(stats)}; expected ${what}, a regular file`);
    const size = stats.size;
    const read = (begin: number, end: number): ArrayBuffer => {
      if (begin < 0 || end > size || begin > end) {
        throw new Error(`${path}: read of bytes [${begin}, ${end}) outside the file's ${size} bytes`);
      }
      const out = new Uint8Array(end - begin);
      let done = 0;
      while (done < out.length) {
        const want = Math.min(CHUNK_BYTES, out.length - done);
        const got = readSync(fd, out, done, want, begin + done);
        if (got === 0)
          throw new Error(`${path}: the file ended at byte ${begin + done}; it shrank while being read`);
        done += got;
      }
      return out.buffer;
    };
    return use({ name: path, size, read });
  } finally {
    closeSync(fd);
  }
}

/** Files read whole (tokenizers, texts) larger than this are refused before they are read. */
export const MAX_WHOLE_FILE_BYTES = 512 << 20;

/**
 * The bytes of a regular file of at most `maxBytes`, refused by its size before it is read; a FIFO, device or
 * directory is refused without being opened (reading a FIFO would block, a device would never end).
 */
export function readRegularFile(path: string, what: string, maxBytes = MAX_WHOLE_FILE_BYTES): Uint8Array {
  const { size } = statRegularFile(path, what);
  if (size > maxBytes) {
    throw new Error(`${path}: ${size} bytes is too large for ${what} (at most ${maxBytes})`);
  }
  return readFileSync(path);
}
