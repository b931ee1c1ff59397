import type { Local } from './expr';
import type { FunctionBuilder } from './function-builder';

/**
 * The attention kernels' pieces of a head row (hd values): vector accumulators per pass over it (4 vectors, 16
 * elements, 64 bytes), which is also their keys per step of the dot products.
 */
export const LANES = 4;
export const BLOCK_BYTES = 16 * LANES;

/**
 * `body(vectors)` over the bytes [0, rowBytes) of a head row: blocks of LANES vectors while a whole block fits
 * (before `blockEnd`), then single vectors; `offset` holds the byte offset of the current piece.
 */
export function overRow(
  f: FunctionBuilder,
  offset: Local,
  blockEnd: Local,
  rowBytes: Local,
  body: (vectors: number) => void,
): void {
  f.for(offset, 0, blockEnd, BLOCK_BYTES, () => body(LANES));
  f.for(offset, blockEnd, rowBytes, 16, () => body(1));
}
