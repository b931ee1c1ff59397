import { add, mul, rsqrt, sub } from '../elementwise';
import { mean } from '../reduce';
import type { Tensor } from '../tensor';

/** (x - mean) / sqrt(var + eps) over the last axis, of primitives: LayerNorm before its weight and bias. */
export function layerNormalised(x: Tensor, eps: number): Tensor {
  const centred = sub(x, mean(x, -1, true));
  return mul(centred, rsqrt(add(mean(mul(centred, centred), -1, true), eps)));
}

/** x / sqrt(mean(x²) + eps) over the last axis, of primitives: RMSNorm before its weight. */
export function rmsNormalised(x: Tensor, eps: number): Tensor {
  return mul(x, rsqrt(add(mean(mul(x, x), -1, true), eps)));
}
