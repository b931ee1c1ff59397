import { showShape, sizeOf } from '@loom/tensor';
import { describeJson, isJsonObject, parseJson } from '@loom/tokenizer';
import { type ByteSource, memorySource } from '../byte-source';
import { formatBytes } from '../bytes';
import { bf16ToF32, f16ToF32 } from '../half';
import type { StoredTensor } from '../tensor';
import { SAFETENSORS_DTYPE_BYTES, SAFETENSORS_DTYPES, type SafetensorsDType } from './dtype';

/** Headers above this size are refused, as the reference implementation does (100 MB). */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/** The key of the optional string-to-string map in a safetensors header. */
export const METADATA_KEY = '__metadata__';

export interface SafetensorsContents {
  /** Tensors in the order of their data in the file; F16 and BF16 are widened to float32. */
  tensors: StoredTensor[];
  /** The `__metadata__` map ({} when absent). */
  metadata: Record<string, string>;
  /** The on-disk dtype of each tensor, by name. */
  dtypes: Map<string, SafetensorsDType>;
}

interface Entry {
  readonly name: string;
  readonly dtype: SafetensorsDType;
  readonly shape: number[];
  readonly begin: number;
  readonly end: number;
}

const WHAT_TO_DO = 'the file is corrupt or not a safetensors file';

function readEntry(name: string, value: unknown, source: string): Entry {
  const where = `${source}: tensor "${name}"`;
  if (!isJsonObject(value)) {
    throw new Error(
      `${where}: expected an object with dtype, shape and data_offsets, found ${describeJson(value)}`,
    );
  }
  const dtype = SAFETENSORS_DTYPES.find((candidate) => candidate === value.dtype);
  if (dtype === undefined) {
    throw new Error(
      `${where}: dtype ${describeJson(value.dtype)} is not one Loom reads; expected one of ${SAFETENSORS_DTYPES.join(', ')} — convert the checkpoint to F32, F16 or BF16`,
    );
  }
  const shape = value.shape;
  if (!Array.isArray(shape) || !shape.every((size) => Number.isSafeInteger(size) && size >= 0)) {
    throw new Error(
      `${where}: shape must be an array of non-negative integers, found ${describeJson(shape)}`,
    );
  }
  const offsets = value.data_offsets;
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((offset) => Number.isSafeInteger(offset) && offset >= 0) ||
    offsets[1] < offsets[0]
  ) {
    throw new Error(
      `${where}: data_offsets must be [begin, end] with 0 <= begin <= end, found ${describeJson(offsets)}`,
    );
  }
  return { name, dtype, shape, begin: offsets[0], end: offsets[1] };
}

function readMetadata(value: unknown, source: string): Record<string, string> {
  if (!isJsonObject(value)) {
    throw new Error(`${source}: ${METADATA_KEY} must be a map of strings, found ${describeJson(value)}`);
  }
  const metadata: Record<string, string> = {};
  for (const [key, text] of Object.entries(value)) {
    if (typeof text !== 'string') {
      throw new Error(`${source}: ${METADATA_KEY}.${key} must be a string, found ${describeJson(text)}`);
    }
    metadata[key] = text;
  }
  return metadata;
}

function decode(file: ByteSource, dataStart: number, entry: Entry): StoredTensor {
  const raw = file.read(dataStart + entry.begin, dataStart + entry.end);
  const shape = [...entry.shape];
  switch (entry.dtype) {
    case 'F32':
      return { name: entry.name, shape, data: new Float32Array(raw) };
    case 'F16':
      return { name: entry.name, shape, data: f16ToF32(new Uint16Array(raw)) };
    case 'BF16':
      return { name: entry.name, shape, data: bf16ToF32(new Uint16Array(raw)) };
    case 'I32':
      return { name: entry.name, shape, data: new Int32Array(raw) };
  }
}

/**
 * Parses a safetensors file: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
 * its dtype, shape and data_offsets (relative to the data after the header) plus an optional `__metadata__`
 * string map, then the tensor bytes. The data must be covered exactly: offsets contiguous from 0, without gaps or
 * overlaps, to the end of the file, each span `sizeOf(shape) * bytes(dtype)` long.
 */
export function parseSafetensors(bytes: Uint8Array, source = 'model.safetensors'): SafetensorsContents {
  return readSafetensors(memorySource(bytes, source));
}

/** `parseSafetensors` over any byte source: the header is read and checked first, then only the tensors' ranges. */
export function readSafetensors(file: ByteSource): SafetensorsContents {
  const source = file.name;
  if (file.size < 8) {
    throw new Error(
      `${source}: ${formatBytes(file.size)} is too short for a safetensors file (expected an 8-byte header length); the file is truncated`,
    );
  }
  const headerBytes = Number(new DataView(file.read(0, 8)).getBigUint64(0, true));
  if (headerBytes > MAX_SAFETENSORS_HEADER_BYTES || headerBytes < 2) {
    throw new Error(
      `${source}: header length is ${headerBytes}; expected 2 to ${MAX_SAFETENSORS_HEADER_BYTES} bytes — ${WHAT_TO_DO}`,
    );
  }
  if (8 + headerBytes > file.size) {
    throw new Error(
      `${source}: header length says ${formatBytes(headerBytes)} but the file holds only ${formatBytes(file.size - 8)} after it; the file is truncated`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file.read(8, 8 + headerBytes));
  } catch {
    throw new Error(`${source}: the ${headerBytes}-byte header is not UTF-8 text; ${WHAT_TO_DO}`);
  }
  const header = parseJson(text, `${source} (safetensors header)`);
  if (!isJsonObject(header)) {
    throw new Error(
      `${source}: the header must be a JSON object, found ${describeJson(header)}; ${WHAT_TO_DO}`,
    );
  }
  let metadata: Record<string, string> = {};
  const entries: Entry[] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name === METADATA_KEY) metadata = readMetadata(value, source);
    else entries.push(readEntry(name, value, source));
  }
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  const dataStart = 8 + headerBytes;
  const dataBytes = file.size - dataStart;
  let expectedBegin = 0;
  for (const entry of entries) {
    const span = `data_offsets [${entry.begin}, ${entry.end}]`;
    if (entry.end > dataBytes) {
      throw new Error(
        `${source}: tensor "${entry.name}" has ${span} beyond the ${formatBytes(dataBytes)} of data in the file; the file is truncated or corrupt`,
      );
    }
    if (entry.begin !== expectedBegin) {
      const problem = entry.begin < expectedBegin ? 'overlaps the previous tensor' : 'leaves a gap before it';
      throw new Error(
        `${source}: tensor "${entry.name}" has ${span}; expected it to begin at ${expectedBegin} — it ${problem}; ${WHAT_TO_DO}`,
      );
    }
    const expectedBytes = sizeOf(entry.shape) * SAFETENSORS_DTYPE_BYTES[entry.dtype];
    if (entry.end - entry.begin !== expectedBytes) {
      throw new Error(
        `${source}: tensor "${entry.name}" (${entry.dtype} ${showShape(entry.shape)}) needs ${formatBytes(expectedBytes)} but its ${span} span ${formatBytes(entry.end - entry.begin)}; ${WHAT_TO_DO}`,
      );
    }
    expectedBegin = entry.end;
  }
  if (expectedBegin !== dataBytes) {
    throw new Error(
      `${source}: the tensors end at byte ${expectedBegin} of the data but the file holds ${formatBytes(dataBytes)} of data; ${formatBytes(dataBytes - expectedBegin)} are not part of any tensor — ${WHAT_TO_DO}`,
    );
  }
  return {
    tensors: entries.map((entry) => decode(file, dataStart, entry)),
    metadata,
    dtypes: new Map(entries.map((entry) => [entry.name, entry.dtype])),
  };
}
