import { sizeOf, stridesOf, type TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { stridedCopy } from './strided-copy';

/** x with axes reordered: out.shape[i] = x.shape[perm[i]]. */
export function permute(rt: GpuRuntime, x: TensorInfo, perm: readonly number[]): GpuStorage {
  const input = rt.storage(x.id);
  const inStrides = stridesOf(x.shape);
  const outShape = perm.map((p) => x.shape[p]);
  const out = rt.alloc(sizeOf(outShape), x.dtype);
  stridedCopy(
    rt,
    x.dtype,
    outShape,
    { storage: input, base: 0, strides: perm.map((p) => inStrides[p]) },
    { storage: out, base: 0, strides: stridesOf(outShape) },
  );
  return out;
}

function offsetOf(starts: readonly number[], strides: readonly number[]): number {
  return starts.reduce((sum, s, i) => sum + s * strides[i], 0);
}

/** The box of x starting at `starts` with extents `sizes`. */
export function slice(
  rt: GpuRuntime,
  x: TensorInfo,
  starts: readonly number[],
  sizes: readonly number[],
): GpuStorage {
  const input = rt.storage(x.id);
  const strides = stridesOf(x.shape);
  const out = rt.alloc(sizeOf(sizes), x.dtype);
  stridedCopy(
    rt,
    x.dtype,
    sizes,
    { storage: input, base: offsetOf(starts, strides), strides },
    { storage: out, base: 0, strides: stridesOf(sizes) },
  );
  return out;
}

/** Writes src into dst in place at `starts` (through a copy when both share storage). */
export function writeSlice(
  rt: GpuRuntime,
  dst: TensorInfo,
  src: TensorInfo,
  starts: readonly number[],
): void {
  const target = rt.storage(dst.id);
  const aliased = rt.storage(src.id) === target;
  const source = aliased
    ? slice(
        rt,
        src,
        src.shape.map(() => 0),
        src.shape,
      )
    : rt.storage(src.id);
  const strides = stridesOf(dst.shape);
  stridedCopy(
    rt,
    src.dtype,
    src.shape,
    { storage: source, base: 0, strides: stridesOf(src.shape) },
    { storage: target, base: offsetOf(starts, strides), strides },
  );
  if (aliased) rt.release(source);
}
