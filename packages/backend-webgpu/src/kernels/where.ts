import type { Shape, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';

/** cond (nonzero, any dtype) ? a : b with all three broadcast to `outShape`. */
export function where(
  rt: GpuRuntime,
  cond: TensorInfo,
  a: TensorInfo,
  b: TensorInfo,
  outShape: Shape,
): GpuStorage {
  return broadcastMap(rt, {
    key: 'where',
    inputs: [
      { name: 'c', info: cond },
      { name: 'x', info: a },
      { name: 'y', info: b },
    ],
    outShape,
    outDtype: a.dtype,
    expr: `select(y, x, c != ${cond.dtype === 'f32' ? '0.0' : '0'})`,
  });
}
