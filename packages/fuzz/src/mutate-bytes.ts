import type { Random } from './random';

/** Values that make sizes, counts and offsets overflow, vanish or point past the end. */
const INTERESTING_INT32 = [0, 1, -1, 2, 7, 255, 256, 65535, 65536, 2 ** 24, 2 ** 30, 0x7fffffff, -0x80000000];
const INTERESTING_FLOAT32 = [
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  3.4e38,
  -0,
  1e-45,
];
const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x20, 0x0a, 0x22, 0x7b, 0x5b, 0xc0, 0xed];

/** Where a mutation lands: mostly near the start, where headers live. */
function position(bytes: Uint8Array, random: Random, width: number): number {
  const span = Math.max(1, bytes.length - width + 1);
  return random.chance(0.5) ? random.int(Math.min(span, 64)) : random.int(span);
}

type ByteMutation = (bytes: Uint8Array, random: Random) => Uint8Array;

const MUTATIONS: readonly ByteMutation[] = [
  function flipBit(bytes, random) {
    if (bytes.length === 0) return bytes;
    const out = bytes.slice();
    out[position(out, random, 1)] ^= 1 << random.int(8);
    return out;
  },
  function setByte(bytes, random) {
    if (bytes.length === 0) return bytes;
    const out = bytes.slice();
    out[position(out, random, 1)] = random.chance(0.5) ? random.pick(INTERESTING_BYTES) : random.int(256);
    return out;
  },
  function setInt32(bytes, random) {
    if (bytes.length < 4) return bytes;
    const out = bytes.slice();
    const at = position(out, random, 4) & ~3;
    new DataView(out.buffer).setInt32(at, random.pick(INTERESTING_INT32), true);
    return out;
  },
  function setUint64(bytes, random) {
    if (bytes.length < 8) return bytes;
    const out = bytes.slice();
    const value = random.pick([
      0n,
      1n,
      2n ** 32n,
      2n ** 53n,
      2n ** 63n,
      2n ** 64n - 1n,
      BigInt(bytes.length),
    ]);
    new DataView(out.buffer).setBigUint64(position(out, random, 8) & ~7, value, true);
    return out;
  },
  function setFloat32(bytes, random) {
    if (bytes.length < 4) return bytes;
    const out = bytes.slice();
    new DataView(out.buffer).setFloat32(
      random.int(out.length >> 2) * 4,
      random.pick(INTERESTING_FLOAT32),
      true,
    );
    return out;
  },
  function truncate(bytes, random) {
    return bytes.slice(0, random.int(bytes.length + 1));
  },
  function append(bytes, random) {
    const extra = Uint8Array.from({ length: 1 + random.int(64) }, () => random.int(256));
    const out = new Uint8Array(bytes.length + extra.length);
    out.set(bytes);
    out.set(extra, bytes.length);
    return out;
  },
  function removeChunk(bytes, random) {
    const at = random.int(bytes.length + 1);
    const length = 1 + random.int(16);
    return Uint8Array.of(...bytes.subarray(0, at), ...bytes.subarray(at + length));
  },
  function duplicateChunk(bytes, random) {
    const at = random.int(bytes.length + 1);
    const chunk = bytes.subarray(at, at + 1 + random.int(32));
    return Uint8Array.of(...bytes.subarray(0, at), ...chunk, ...bytes.subarray(at));
  },
];

/** One to four random byte-level mutations of `bytes` (never in place). */
export function mutateBytes(bytes: Uint8Array, random: Random): Uint8Array {
  let out = bytes;
  const count = 1 + random.int(4);
  for (let i = 0; i < count; i++) out = random.pick(MUTATIONS)(out, random);
  return out;
}
