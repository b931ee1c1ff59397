import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { concat, unsqueeze } from '../movement';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, NORM_PARAM_GRAD_SHAPES, REDUCTION, shapeLabel } from './case';
import { sameShape, sumRows } from './checks';
import { runFused } from './dispatch';
import { layerNormalised } from './norm-composite';
import { fusedOp } from './op';

/**
 * The gradients of layernorm's weight and bias for the gradient `grad` of its output, packed [2, d]: Σ over rows
 * of grad · (x - mean) / sqrt(var + eps), then Σ over rows of grad; kernel: `layernormParamGrad(x, grad, eps)`. One
 * pass over x and grad instead of the composite's four (the normalised x again, the product, two column sums).
 * It runs inside layernorm's rule and is differentiated, where ever needed, through its composite.
 */
export const layernormParamGradOp = fusedOp({
  name: 'layernormParamGrad',
  inputs: ['x', 'grad'],
  outputShape: ([x]) => [2, x.shape[x.shape.length - 1]],
  composite: (x: Tensor, grad: Tensor, eps: number) =>
    scope(() => {
      const normed = layerNormalised(x, eps);
      return concat([unsqueeze(sumRows(grad.mul(normed)), 0), unsqueeze(sumRows(grad), 0)], 0); // [2, d]
    }),
  gradient: 'through-composite',
  cases: casesOver(NORM_PARAM_GRAD_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape }, { shape }],
    params: [1e-5],
    tol: REDUCTION,
  })),
});

/** layernorm's weight and bias gradients for `grad`, the gradient of its output: [2, d], weight's then bias's. */
export function layernormParamGrad(x: Tensor, grad: Tensor, eps = 1e-5): Tensor {
  sameBackend('layernormParamGrad', x, grad);
  for (const t of [x, grad]) assertDType('layernormParamGrad', t.dtype, ['f32']);
  sameShape('layernormParamGrad', 'x', x, 'grad', grad);
  return runFused(layernormParamGradOp, [x, grad], [eps]);
}
