import { add, mul, rsqrt, sub } from '../elementwise';
import { mean } from '../reduce';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { NORM_GRAD_CASES } from './case';
import { checkNormGrad } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * The input gradient of rmsnorm; kernel: `rmsnormGrad(x, weight, grad, eps)`. It runs inside
 * rmsnorm's backward rule, so autograd differentiates it (never needed in training) through
 * its composite.
 */
export const rmsnormGradOp = fusedOp({
  name: 'rmsnormGrad',
  inputs: ['x', 'weight', 'grad'],
  outputShape: ([x]) => x.shape,
  /** With r = rsqrt(mean(x^2) + eps), n = x r and dn = grad * weight: dx = r (dn - n mean(dn n)). */
  composite: (x: Tensor, weight: Tensor, grad: Tensor, eps: number) =>
    scope(() => {
      const r = rsqrt(add(mean(mul(x, x), -1, true), eps));
      const normed = mul(x, r);
      const dn = mul(grad, weight);
      return mul(r, sub(dn, mul(normed, mean(mul(dn, normed), -1, true))));
    }),
  gradient: 'through-composite',
  cases: NORM_GRAD_CASES,
});

/** The input gradient of `rmsnorm(x, weight, eps)` for the output gradient `grad`. */
export function rmsnormGrad(x: Tensor, weight: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  checkNormGrad('rmsnormGrad', x, weight, grad);
  return runFused(rmsnormGradOp, [x, weight, grad], [eps]);
}
