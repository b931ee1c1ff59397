import { type HostArray, type Shape, stridesOf } from '@loom/tensor';

/** out[i0..] = x[permuted index]; out.shape[i] = shape[perm[i]]. */
export function permuteKernel(x: HostArray, shape: Shape, perm: readonly number[], out: HostArray): void {
  const inStrides = stridesOf(shape);
  const outShape = perm.map((p) => shape[p]);
  const strides = perm.map((p) => inStrides[p]);
  copyStrided(x, 0, strides, outShape, out, 0, stridesOf(outShape));
}

/**
 * Copies a box of `extent` from `src` (element strides `srcStrides`, starting at `srcOffset`)
 * to `dst` (strides `dstStrides` from `dstOffset`). The innermost axis is copied as a run.
 */
export function copyStrided(
  src: HostArray,
  srcOffset: number,
  srcStrides: readonly number[],
  extent: Shape,
  dst: HostArray,
  dstOffset: number,
  dstStrides: readonly number[],
): void {
  const rank = extent.length;
  if (rank === 0) {
    dst[dstOffset] = src[srcOffset];
    return;
  }
  let total = 1;
  for (const d of extent) total *= d;
  if (total === 0) return;
  const last = rank - 1;
  const run = extent[last];
  const sStep = srcStrides[last];
  const dStep = dstStrides[last];
  const index = new Int32Array(rank);
  let s = srcOffset;
  let d = dstOffset;
  for (let done = 0; done < total; done += run) {
    if (sStep === 1 && dStep === 1) {
      dst.set(src.subarray(s, s + run), d);
    } else {
      for (let i = 0; i < run; i++) dst[d + i * dStep] = src[s + i * sStep];
    }
    for (let axis = last - 1; axis >= 0; axis--) {
      index[axis]++;
      s += srcStrides[axis];
      d += dstStrides[axis];
      if (index[axis] < extent[axis]) break;
      s -= srcStrides[axis] * extent[axis];
      d -= dstStrides[axis] * extent[axis];
      index[axis] = 0;
    }
  }
}

function offsetOf(starts: readonly number[], strides: readonly number[]): number {
  let o = 0;
  for (let i = 0; i < starts.length; i++) o += starts[i] * strides[i];
  return o;
}

export function sliceKernel(
  x: HostArray,
  shape: Shape,
  starts: readonly number[],
  sizes: readonly number[],
  out: HostArray,
): void {
  const strides = stridesOf(shape);
  copyStrided(x, offsetOf(starts, strides), strides, sizes, out, 0, stridesOf(sizes));
}

export function writeSliceKernel(
  dst: HostArray,
  dstShape: Shape,
  src: HostArray,
  srcShape: Shape,
  starts: readonly number[],
): void {
  const strides = stridesOf(dstShape);
  copyStrided(src, 0, stridesOf(srcShape), srcShape, dst, offsetOf(starts, strides), strides);
}
