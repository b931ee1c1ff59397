import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';
import { SIGMOID } from './math';

/** silu(gate) * up, elementwise over equal shapes. */
export function swiglu(rt: GpuRuntime, gate: TensorInfo, up: TensorInfo): GpuStorage {
  return broadcastMap(rt, {
    key: 'swiglu',
    inputs: [
      { name: 'g', info: gate },
      { name: 'u', info: up },
    ],
    outShape: gate.shape,
    outDtype: 'f32',
    expr: 'g * sigmoid_(g) * u',
    helpers: SIGMOID,
  });
}
