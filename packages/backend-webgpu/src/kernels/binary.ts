import type { BinaryOp, DType, Shape, TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';
import { POW } from './math';

function expression(op: BinaryOp, dtype: DType): string {
  switch (op) {
    case 'add':
      return 'x + y';
    case 'sub':
      return 'x - y';
    case 'mul':
      return 'x * y';
    case 'div':
      return dtype === 'f32' ? 'x / y' : 'select(x / y, x, y == 0)';
    case 'pow':
      return 'pow_(x, y)';
    case 'max':
      return 'max(x, y)';
    case 'min':
      return 'min(x, y)';
  }
}

/** Elementwise arithmetic with both inputs broadcast to `outShape`; i32 division truncates and x / 0 = x. */
export function binary(
  rt: GpuRuntime,
  op: BinaryOp,
  a: TensorInfo,
  b: TensorInfo,
  outShape: Shape,
): GpuStorage {
  return broadcastMap(rt, {
    key: `binary:${op}`,
    inputs: [
      { name: 'x', info: a },
      { name: 'y', info: b },
    ],
    outShape,
    outDtype: a.dtype,
    expr: expression(op, a.dtype),
    helpers: op === 'pow' ? POW : '',
  });
}
