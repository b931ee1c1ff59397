/** Alignment and granularity of every block: one cache line. */
export const BLOCK_ALIGN = 64;

const SMALL_LIMIT = 4096;
const SMALL_CLASSES = SMALL_LIMIT / BLOCK_ALIGN;
const STEPS_PER_OCTAVE = 4;

/** A size class: its index among all classes and the block size it hands out, in bytes. */
export interface SizeClass {
  readonly index: number;
  readonly size: number;
}

/**
 * The class of a request of `bytes` (> 0): multiples of 64 bytes up to 4 KiB, then four
 * classes per power of two, so a block wastes at most a quarter of its size.
 */
export function sizeClass(bytes: number): SizeClass {
  if (!Number.isInteger(bytes) || bytes <= 0)
    throw new Error(`size class: expected a positive byte count, got ${bytes}`);
  if (bytes <= SMALL_LIMIT) {
    const size = Math.ceil(bytes / BLOCK_ALIGN) * BLOCK_ALIGN;
    return { index: size / BLOCK_ALIGN - 1, size };
  }
  const octave = 31 - Math.clz32(bytes - 1);
  const step = 2 ** (octave - 2);
  const size = Math.ceil(bytes / step) * step;
  return { index: SMALL_CLASSES + (octave - 12) * STEPS_PER_OCTAVE + (size / step - 5), size };
}
