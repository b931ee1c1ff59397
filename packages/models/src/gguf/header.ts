import type { ByteSource } from '../byte-source';
import { Cursor } from './cursor';

/** A metadata value: numbers (every integer width and float), booleans, text, and arrays of them. */
export type GgufValue = number | boolean | string | readonly GgufValue[];

/** Where one tensor is: its GGUF name, its dims as GGUF lists them (fastest-varying first), its type id and offset. */
export interface GgufTensorInfo {
  readonly name: string;
  readonly dims: readonly number[];
  readonly type: number;
  /** Absolute byte offset in the file. */
  readonly offset: number;
}

export interface GgufHeader {
  readonly version: number;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensors: readonly GgufTensorInfo[];
}

/** "GGUF" read as a little-endian uint32. */
export const GGUF_MAGIC = 0x46554747;
const DEFAULT_ALIGNMENT = 32;
const MAX_DIMS = 4;

/** Bytes of one element of each scalar value type (strings and arrays are variable). */
const SCALAR_BYTES: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};
const STRING = 8;
const ARRAY = 9;

function readString(cursor: Cursor, what: string): string {
  const length = cursor.u64(`the length of ${what}`);
  return cursor.text(length, what);
}

function readValue(cursor: Cursor, type: number, what: string, depth: number): GgufValue {
  switch (type) {
    case 0:
      return cursor.u8(what);
    case 1:
      return (cursor.u8(what) << 24) >> 24;
    case 2:
      return cursor.u8(what) | (cursor.u8(what) << 8);
    case 3:
      return ((cursor.u8(what) | (cursor.u8(what) << 8)) << 16) >> 16;
    case 4:
      return cursor.u32(what);
    case 5:
      return cursor.i32(what);
    case 6:
      return cursor.f32(what);
    case 7: {
      const byte = cursor.u8(what);
      if (byte > 1) throw new Error(`${cursor.name}: ${what} is a bool of value ${byte}; expected 0 or 1`);
      return byte === 1;
    }
    case STRING:
      return readString(cursor, what);
    case ARRAY: {
      if (depth > 0)
        throw new Error(`${cursor.name}: ${what} is an array of arrays, which GGUF readers do not take`);
      const elementType = cursor.u32(`the element type of ${what}`);
      const count = cursor.u64(`the length of ${what}`);
      // Every element takes at least one byte (a string at least its 8-byte length), so this bounds the allocation.
      cursor.need(
        count,
        elementType === STRING ? 8 : (SCALAR_BYTES[elementType] ?? 1),
        `${what} (${count} elements)`,
      );
      const values: GgufValue[] = [];
      for (let i = 0; i < count; i++) values.push(readValue(cursor, elementType, `${what}[${i}]`, depth + 1));
      return values;
    }
    case 10:
      return cursor.u64(what);
    case 11:
      return cursor.i64(what);
    case 12:
      return cursor.f64(what);
    default:
      throw new Error(
        `${cursor.name}: ${what} has value type ${type}; GGUF defines types 0 to 12 — the file is corrupt`,
      );
  }
}

/**
 * Reads a GGUF header (versions 2 and 3): metadata and tensor infos, every count and length checked against the
 * bytes left in the file before it is used, and every tensor offset checked to be aligned and inside the file.
 */
export function readGgufHeader(source: ByteSource): GgufHeader {
  const cursor = new Cursor(source);
  const name = source.name;
  if (source.size < 24 || cursor.u32('the magic') !== GGUF_MAGIC) {
    throw new Error(`${name}: not a GGUF file (it does not start with "GGUF" and a 24-byte header)`);
  }
  const version = cursor.u32('the version');
  if (version !== 2 && version !== 3) {
    throw new Error(`${name}: GGUF version ${version}; Loom reads versions 2 and 3`);
  }
  const tensorCount = cursor.u64('the tensor count');
  const metadataCount = cursor.u64('the metadata count');
  // A metadata entry takes at least 12 bytes (key length, type, one byte); a tensor info at least 24.
  cursor.need(metadataCount, 12, `${metadataCount} metadata entries`);
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < metadataCount; i++) {
    const key = readString(cursor, `metadata key ${i}`);
    const type = cursor.u32(`the type of metadata "${key}"`);
    metadata.set(key, readValue(cursor, type, `metadata "${key}"`, 0));
  }
  cursor.need(tensorCount, 24, `${tensorCount} tensor infos`);
  const infos: { name: string; dims: number[]; type: number; relative: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const tensorName = readString(cursor, `the name of tensor ${i}`);
    const what = `tensor "${tensorName}"`;
    const dimCount = cursor.u32(`the dimension count of ${what}`);
    if (dimCount < 1 || dimCount > MAX_DIMS) {
      throw new Error(`${name}: ${what} has ${dimCount} dimensions; expected 1 to ${MAX_DIMS}`);
    }
    const dims = Array.from({ length: dimCount }, (_, d) => cursor.u64(`dimension ${d} of ${what}`));
    infos.push({
      name: tensorName,
      dims,
      type: cursor.u32(`the type of ${what}`),
      relative: cursor.u64(`the offset of ${what}`),
    });
  }
  const alignment = metadata.get('general.alignment') ?? DEFAULT_ALIGNMENT;
  if (typeof alignment !== 'number' || !Number.isInteger(alignment) || alignment < 1 || alignment > 1 << 20) {
    throw new Error(
      `${name}: metadata "general.alignment" is ${JSON.stringify(alignment)}; expected a positive integer`,
    );
  }
  const dataStart = Math.ceil(cursor.offset / alignment) * alignment;
  const tensors = infos.map(({ name: tensorName, dims, type, relative }) => {
    if (relative % alignment !== 0) {
      throw new Error(
        `${name}: tensor "${tensorName}" starts at data offset ${relative}, not a multiple of the alignment ${alignment}`,
      );
    }
    if (dataStart + relative > source.size) {
      throw new Error(
        `${name}: tensor "${tensorName}" starts at byte ${dataStart + relative}, past the end of the ${source.size}-byte file`,
      );
    }
    return { name: tensorName, dims, type, offset: dataStart + relative };
  });
  return { version, metadata, tensors };
}
