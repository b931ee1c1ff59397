import type { TensorInfo } from '@loom/tensor';
import type { GpuStorage } from '../gpu-storage';
import type { GpuRuntime } from '../runtime';
import { broadcastMap } from './broadcast-map';
import { TANH } from './math';

const GELU_SLOPE = `${TANH}
fn gelu_slope_(x: f32) -> f32 {
  let c = 0.7978845608028654;
  let t = tanh_(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 0.134145 * x * x);
}
`;

/** grad * gelu'(x) (tanh approximation), elementwise over equal shapes. */
export function geluGrad(rt: GpuRuntime, x: TensorInfo, grad: TensorInfo): GpuStorage {
  return broadcastMap(rt, {
    key: 'geluGrad',
    inputs: [
      { name: 'x', info: x },
      { name: 'g', info: grad },
    ],
    outShape: x.shape,
    outDtype: 'f32',
    expr: 'g * gelu_slope_(x)',
    helpers: GELU_SLOPE,
  });
}
