import { broadcastStrides, type Shape, sizeOf, stridesOf } from '@loom/tensor';

/**
 * For every element of `outShape` in row-major order, the flat index it reads from an input of
 * `shape` broadcast to `outShape` (stride 0 along broadcast axes).
 */
export function broadcastIndices(shape: Shape, outShape: Shape): Int32Array {
  const strides = broadcastStrides(shape, outShape);
  const out = new Int32Array(sizeOf(outShape));
  const index = new Array<number>(outShape.length).fill(0);
  for (let i = 0; i < out.length; i++) {
    let flat = 0;
    for (let d = 0; d < outShape.length; d++) flat += index[d] * strides[d];
    out[i] = flat;
    for (let d = outShape.length - 1; d >= 0; d--) {
      if (++index[d] < outShape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

/** Calls `visit(flat)` with the flat index of every element of the box `starts` + `sizes` in `shape`, row-major. */
export function forEachInBox(
  shape: Shape,
  starts: readonly number[],
  sizes: readonly number[],
  visit: (flat: number, i: number) => void,
): void {
  const strides = stridesOf(shape);
  const count = sizeOf(sizes);
  const index = new Array<number>(sizes.length).fill(0);
  for (let i = 0; i < count; i++) {
    let flat = 0;
    for (let d = 0; d < sizes.length; d++) flat += (starts[d] + index[d]) * strides[d];
    visit(flat, i);
    for (let d = sizes.length - 1; d >= 0; d--) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}
