import { copyBytes } from './bytes';

/**
 * Random access to the bytes of a model file, so that readers check a header before they read
 * (or allocate for) the data it describes: in memory (a fetched file in a browser) or on disk
 * (`openFileSource`, positioned reads of a regular file of any size).
 */
export interface ByteSource {
  /** Names the file in errors. */
  readonly name: string;
  /** Total size in bytes. */
  readonly size: number;
  /** A fresh, aligned copy of bytes [begin, end) (within `size`). */
  read(begin: number, end: number): ArrayBuffer;
}

/** A source over bytes already in memory. */
export function memorySource(bytes: Uint8Array, name: string): ByteSource {
  return { name, size: bytes.length, read: (begin, end) => copyBytes(bytes, begin, end) };
}

/** The first `count` bytes of a source (fewer when it is shorter). */
export function headOf(source: ByteSource, count: number): Uint8Array {
  return new Uint8Array(source.read(0, Math.min(count, source.size)));
}
