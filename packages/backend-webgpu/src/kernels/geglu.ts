import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';
import { GELU } from './math';

/** gelu(gate) · up (GELU's tanh form), elementwise over equal shapes. */
export function geglu(rt: GpuRuntime, gate: TensorInfo, up: TensorInfo): GpuStorage {
  return broadcastMap(rt, {
    key: 'geglu',
    inputs: [
      { name: 'g', info: gate },
      { name: 'u', info: up },
    ],
    outShape: gate.shape,
    outDtype: 'f32',
    expr: 'gelu_(g) * u',
    helpers: GELU,
  });
}
