import type { DType, Shape } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import { ParamLayout } from '../param-layout';
import type { GpuRuntime } from '../runtime';
import { entryPoint, makeProgram, wgslType } from './program';
import { collapse, countOf, stridedOffsets } from './strided';

/** One side of a strided copy: a buffer, the element where the walk starts and its strides. */
export interface CopySide {
  readonly storage: GpuStorage;
  readonly base: number;
  readonly strides: readonly number[];
}

const operands = ['src', 'dst'];

/**
 * Walks `shape` (row-major) copying src[src.base + coord . src.strides] to
 * dst[dst.base + coord . dst.strides]; permute, slice and writeSlice are all this copy.
 */
export function stridedCopy(rt: GpuRuntime, dtype: DType, shape: Shape, src: CopySide, dst: CopySide): void {
  const layout = collapse(shape, [src.strides, dst.strides]);
  const count = countOf(layout);
  const rank = layout.shape.length;
  const params = new ParamLayout()
    .scalar('count', 'u32')
    .scalar('srcBase', 'u32')
    .scalar('dstBase', 'u32')
    .array('shape', 'u32', rank)
    .array('srcStrides', 'u32', rank)
    .array('dstStrides', 'u32', rank);
  const wg = rt.limits.workgroupSize;
  const type = wgslType(dtype);
  const program = makeProgram(
    `copy:${type}:${rank}:${wg}`,
    [{ name: 'from_buf', type }],
    [{ name: 'to_buf', type }],
    params,
    () => `${entryPoint(wg)}
  let idx = gid * ${wg}u + lid;
  if (idx >= p.count) { return; }
${stridedOffsets(rank, operands)}
  to_buf[p.dstBase + off_dst] = from_buf[p.srcBase + off_src];
}`,
  );
  rt.launch({
    program,
    inputs: [src.storage],
    outputs: [dst.storage],
    params: params.pack({
      count,
      srcBase: src.base,
      dstBase: dst.base,
      shape: layout.shape,
      srcStrides: layout.strides[0],
      dstStrides: layout.strides[1],
    }),
    workgroups: Math.ceil(count / wg),
  });
}
