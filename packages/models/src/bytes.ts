/** Byte helpers shared by the binary formats. Loom runs on little-endian hosts (every browser and Node target). */

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A fresh, aligned copy of `bytes[begin, end)`, to view as a typed array of the file's little-endian values. */
export function copyBytes(bytes: Uint8Array, begin: number, end: number): ArrayBuffer {
  if (!LITTLE_ENDIAN_HOST) {
    throw new Error('@loom/models reads little-endian checkpoint files and needs a little-endian host');
  }
  const out = new Uint8Array(end - begin);
  out.set(bytes.subarray(begin, end));
  return out.buffer;
}

/** The bytes of a typed array (a view, not a copy). */
export function bytesOf(array: Float32Array | Int32Array | Uint16Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** A byte count for error messages. */
export function formatBytes(n: number): string {
  return n === 1 ? '1 byte' : `${n} bytes`;
}
