import { type HostArray, type Shape, stridesOf } from '@loom/tensor';
import { forEachOuterIndex, type MergedAxes, mergeAxes } from './merged-axes';
import { COPY_ROWS_KERNEL } from './wasm/copy-kernel';
import { type CpuKernelSettings, kernelRuntime } from './wasm/settings';

/** Values of a movement operand, and their byte address when they live in the WebAssembly heap. */
export interface MoveOperand {
  readonly values: HostArray;
  readonly address: number | undefined;
}

/** 2-D blocks of at least this many elements (with contiguous rows) go to the WebAssembly copy kernel. */
const WASM_MIN_BLOCK = 64;

/** out[i0..] = x[permuted index]; out.shape[i] = shape[perm[i]]. */
export function permuteKernel(
  settings: CpuKernelSettings,
  x: MoveOperand,
  shape: Shape,
  perm: readonly number[],
  out: MoveOperand,
): void {
  const inStrides = stridesOf(shape);
  const outShape = perm.map((p) => shape[p]);
  const strides = perm.map((p) => inStrides[p]);
  copyStrided(settings, x, 0, strides, outShape, out, 0, stridesOf(outShape));
}

/** Contiguous runs at least this long are copied with `set` (a subarray per run costs more for short ones). */
const SET_MIN_RUN = 256;

/**
 * Copies a box of `extent` from `src` (element strides `srcStrides`, starting at `srcOffset`)
 * to `dst` (strides `dstStrides` from `dstOffset`). The box's axes are first merged (`mergeAxes`).
 * Where both live in the WebAssembly heap and the innermost axis is contiguous on both sides,
 * the last three axes go to the SIMD copy kernel as planes of rows; else the innermost axis is
 * copied as a run in JavaScript.
 */
export function copyStrided(
  settings: CpuKernelSettings,
  srcOperand: MoveOperand,
  srcOffset: number,
  srcStrides: readonly number[],
  extent: Shape,
  dstOperand: MoveOperand,
  dstOffset: number,
  dstStrides: readonly number[],
): void {
  if (extent.some((d) => d === 0)) return;
  const box = mergeAxes(extent, [srcStrides, dstStrides]);
  if (copyBlocks(settings, srcOperand, srcOffset, dstOperand, dstOffset, box)) return;
  const src = srcOperand.values;
  const dst = dstOperand.values;
  const { sizes, strides } = box;
  const rank = sizes.length;
  if (rank === 0) {
    dst[dstOffset] = src[srcOffset];
    return;
  }
  const last = rank - 1;
  const run = sizes[last];
  const sStep = strides[0][last];
  const dStep = strides[1][last];
  const contiguous = sStep === 1 && dStep === 1;
  forEachOuterIndex(sizes, last, strides, [srcOffset, dstOffset], (offsets) => {
    const [s, d] = [offsets[0], offsets[1]];
    if (contiguous && run >= SET_MIN_RUN) {
      dst.set(src.subarray(s, s + run), d);
    } else if (contiguous) {
      for (let i = 0; i < run; i++) dst[d + i] = src[s + i];
    } else {
      for (let i = 0; i < run; i++) dst[d + i * dStep] = src[s + i * sStep];
    }
  });
}

/** The heap path of `copyStrided`; returns false, copying nothing, where it does not apply. */
function copyBlocks(
  settings: CpuKernelSettings,
  src: MoveOperand,
  srcOffset: number,
  dst: MoveOperand,
  dstOffset: number,
  { sizes: extent, strides: [srcStrides, dstStrides] }: MergedAxes,
): boolean {
  const rank = extent.length;
  const [srcAddress, dstAddress] = [src.address, dst.address];
  if (rank < 2 || srcAddress === undefined || dstAddress === undefined) return false;
  const last = rank - 1;
  const [rows, run] = [extent[last - 1], extent[last]];
  if (srcStrides[last] !== 1 || dstStrides[last] !== 1 || rows * run < WASM_MIN_BLOCK) return false;
  const runtime = kernelRuntime(settings);
  if (!runtime) return false;
  const copy = runtime.kernels[COPY_ROWS_KERNEL];
  const work = runtime.work.offset;
  // The third axis from the end, if any, is the kernel's planes; the axes before it are walked here.
  const outer = Math.max(0, rank - 3);
  const [planes, srcPlane, dstPlane] =
    rank >= 3 ? [extent[outer], srcStrides[outer], dstStrides[outer]] : [1, 0, 0];
  const [srcRowStride, dstRowStride] = [srcStrides[last - 1], dstStrides[last - 1]];
  forEachOuterIndex(extent, outer, [srcStrides, dstStrides], [srcOffset, dstOffset], (offsets) =>
    copy(
      srcAddress + 4 * offsets[0],
      dstAddress + 4 * offsets[1],
      planes,
      rows,
      run,
      srcPlane,
      dstPlane,
      srcRowStride,
      dstRowStride,
      work,
    ),
  );
  return true;
}

function offsetOf(starts: readonly number[], strides: readonly number[]): number {
  let o = 0;
  for (let i = 0; i < starts.length; i++) o += starts[i] * strides[i];
  return o;
}

export function sliceKernel(
  settings: CpuKernelSettings,
  x: MoveOperand,
  shape: Shape,
  starts: readonly number[],
  sizes: readonly number[],
  out: MoveOperand,
): void {
  const strides = stridesOf(shape);
  copyStrided(settings, x, offsetOf(starts, strides), strides, sizes, out, 0, stridesOf(sizes));
}

export function writeSliceKernel(
  settings: CpuKernelSettings,
  dst: MoveOperand,
  dstShape: Shape,
  src: MoveOperand,
  srcShape: Shape,
  starts: readonly number[],
): void {
  const strides = stridesOf(dstShape);
  copyStrided(settings, src, 0, stridesOf(srcShape), srcShape, dst, offsetOf(starts, strides), strides);
}
