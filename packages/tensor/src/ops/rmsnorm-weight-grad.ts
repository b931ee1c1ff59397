import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, NORM_PARAM_GRAD_SHAPES, REDUCTION, shapeLabel } from './case';
import { sameShape, sumRows } from './checks';
import { runFused } from './dispatch';
import { rmsNormalised } from './norm-composite';
import { fusedOp } from './op';

/**
 * The gradient of rmsnorm's weight [d] for the gradient `grad` of its output: Σ over rows of
 * grad · x / sqrt(mean(x²) + eps); kernel: `rmsnormWeightGrad(x, grad, eps)`. One pass over x and grad instead of
 * the composite's three (the normalised x again, the product, the column sum). It runs inside rmsnorm's rule
 * and is differentiated, where ever needed, through its composite.
 */
export const rmsnormWeightGradOp = fusedOp({
  name: 'rmsnormWeightGrad',
  inputs: ['x', 'grad'],
  outputShape: ([x]) => [x.shape[x.shape.length - 1]],
  composite: (x: Tensor, grad: Tensor, eps: number) => scope(() => sumRows(grad.mul(rmsNormalised(x, eps)))),
  gradient: 'through-composite',
  cases: casesOver(NORM_PARAM_GRAD_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape }, { shape }],
    params: [1e-5],
    tol: REDUCTION,
  })),
});

/** rmsnorm's weight gradient [d] for `grad`, the gradient of its output. */
export function rmsnormWeightGrad(x: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  sameBackend('rmsnormWeightGrad', x, grad);
  for (const t of [x, grad]) assertDType('rmsnormWeightGrad', t.dtype, ['f32']);
  sameShape('rmsnormWeightGrad', 'x', x, 'grad', grad);
  return runFused(rmsnormWeightGradOp, [x, grad], [eps]);
}
