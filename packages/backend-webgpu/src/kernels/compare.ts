import type { CompareOp, Shape, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';

const operators: Record<CompareOp, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };

/** Elementwise comparison giving an i32 mask of 0 and 1; inputs broadcast to `outShape`. */
export function compare(
  rt: GpuRuntime,
  op: CompareOp,
  a: TensorInfo,
  b: TensorInfo,
  outShape: Shape,
): GpuStorage {
  return broadcastMap(rt, {
    key: `compare:${op}`,
    inputs: [
      { name: 'x', info: a },
      { name: 'y', info: b },
    ],
    outShape,
    outDtype: 'i32',
    expr: `select(0, 1, x ${operators[op]} y)`,
  });
}
