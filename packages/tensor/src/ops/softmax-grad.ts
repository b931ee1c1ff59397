import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * y (g - sum(g y)) over the last axis, the backward pass of `softmax` (y its output, g the gradient of y); kernel:
 * `softmaxGrad(y, grad)`. One pass over the rows instead of the four of its composite (attention's backward in
 * training runs it on every layer's [B, H, T, T] weights). Differentiated, where ever needed, through its composite.
 */
export const softmaxGradOp = fusedOp({
  name: 'softmaxGrad',
  inputs: ['y', 'grad'],
  outputShape: ([y]) => y.shape,
  composite: (y: Tensor, grad: Tensor) => scope(() => y.mul(grad.sub(grad.mul(y).sum(-1, true)))),
  gradient: 'through-composite',
  cases: casesOver(ROW_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [
      { shape, dist: { kind: 'positive' } },
      { shape, dist: { kind: 'normal', scale: 2 } },
    ],
    params: [],
    tol: REDUCTION,
  })),
});

/** y (grad - sum(grad y)) over the last axis: the backward pass of `softmax`, fused where a backend can. */
export function softmaxGrad(y: Tensor, grad: Tensor): Tensor {
  sameBackend('softmaxGrad', y, grad);
  assertDType('softmaxGrad', y.dtype, ['f32']);
  assertDType('softmaxGrad', grad.dtype, ['f32']);
  sameShape('softmaxGrad', 'y', y, 'grad', grad);
  return runFused(softmaxGradOp, [y, grad], []);
}
