import type { HostArray } from '@loom/tensor';
import type { FloatArray } from './precision';

/** out[i, :] = table[ids[i], :], zeros for ids outside [0, rows). */
export function gatherKernel(
  table: HostArray,
  rows: number,
  rowSize: number,
  ids: Int32Array,
  out: HostArray,
): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (id < 0 || id >= rows) continue;
    out.set(table.subarray(id * rowSize, (id + 1) * rowSize), i * rowSize);
  }
}

/** out[ids[i], :] += src[i, :] (out starts at zero), skipping ids outside [0, numRows). */
export function scatterAddKernel(
  src: FloatArray,
  ids: Int32Array,
  rowSize: number,
  numRows: number,
  out: FloatArray,
): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (id < 0 || id >= numRows) continue;
    const o = id * rowSize;
    const s = i * rowSize;
    for (let j = 0; j < rowSize; j++) out[o + j] += src[s + j];
  }
}
