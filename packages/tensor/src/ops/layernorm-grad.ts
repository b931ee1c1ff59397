import { add, mul, rsqrt, sub } from '../elementwise';
import { mean } from '../reduce';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { NORM_GRAD_CASES } from './case';
import { checkNormGrad } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * The input gradient of layernorm; kernel: `layernormGrad(x, weight, grad, eps)`. Like
 * rmsnormGrad it runs inside a backward rule and is differentiated through its composite.
 */
export const layernormGradOp = fusedOp({
  name: 'layernormGrad',
  inputs: ['x', 'weight', 'grad'],
  outputShape: ([x]) => x.shape,
  /** With n = (x - mean) r and dn = grad * weight: dx = r (dn - mean(dn) - n mean(dn n)). */
  composite: (x: Tensor, weight: Tensor, grad: Tensor, eps: number) =>
    scope(() => {
      const centred = sub(x, mean(x, -1, true));
      const r = rsqrt(add(mean(mul(centred, centred), -1, true), eps));
      const normed = mul(centred, r);
      const dn = mul(grad, weight);
      return mul(r, sub(sub(dn, mean(dn, -1, true)), mul(normed, mean(mul(dn, normed), -1, true))));
    }),
  gradient: 'through-composite',
  cases: NORM_GRAD_CASES,
});

/** The input gradient of `layernorm(x, weight, bias, eps)` for the output gradient `grad`. */
export function layernormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  checkNormGrad('layernormGrad', x, weight, grad);
  return runFused(layernormGradOp, [x, weight, grad], [eps]);
}
