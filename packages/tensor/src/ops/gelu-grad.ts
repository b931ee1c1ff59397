import { assertDType } from '../dtype';
import { add, mul } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

const GELU_C = Math.sqrt(2 / Math.PI);

/**
 * grad * gelu'(x) for the tanh approximation, the backward pass of `gelu`; kernel:
 * `geluGrad(x, grad)`. It runs inside gelu's backward rule and is differentiated (never
 * needed in training) through its composite.
 */
export const geluGradOp = fusedOp({
  name: 'geluGrad',
  inputs: ['x', 'grad'],
  outputShape: ([x]) => x.shape,
  /** grad * d/dx [0.5 x (1 + tanh(c (x + 0.044715 x^3)))]. */
  composite: (x: Tensor, grad: Tensor) =>
    scope(() => {
      const x2 = mul(x, x);
      const t = mul(add(x, mul(mul(x2, x), 0.044715)), GELU_C).tanh();
      const dInner = mul(add(mul(x2, 3 * 0.044715), 1), GELU_C);
      const slope = add(mul(add(t, 1), 0.5), mul(mul(mul(x, 0.5), mul(t, t).neg().add(1)), dInner));
      return mul(grad, slope);
    }),
  gradient: 'through-composite',
  cases: casesOver([[1], [257], [768, 512]], (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape, dist: { kind: 'normal', scale: 3 } }, { shape }],
    params: [],
    tol: { atol: 1e-5, rtol: 1e-4 },
  })),
});

/** grad * gelu'(x) (tanh approximation): the backward pass of `gelu`, fused where a backend can. */
export function geluGrad(x: Tensor, grad: Tensor): Tensor {
  sameBackend('geluGrad', x, grad);
  assertDType('geluGrad', x.dtype, ['f32']);
  sameShape('geluGrad', 'x', x, 'grad', grad);
  return runFused(geluGradOp, [x, grad], []);
}
