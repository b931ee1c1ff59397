import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * The gate's gradient of `swiglu(gate, up)` for the output gradient `grad`: d gate =
 * grad · up · silu'(gate), shaped like gate. Kernel: `swigluGrad(gate, up, grad)`. One pass over
 * the three inputs instead of the primitives' several (the llama feed-forward's backward in
 * training runs it on every layer's [B, T, hidden] activations). The other gradient,
 * d up = grad · silu(gate), is `swiglu(gate, grad)` itself, so swiglu's rule calls that instead
 * of packing both into one output and slicing them apart (two copies). It runs inside that rule,
 * so autograd differentiates it (never needed in training) through its composite.
 */
export const swigluGradOp = fusedOp({
  name: 'swigluGrad',
  inputs: ['gate', 'up', 'grad'],
  outputShape: ([gate]) => gate.shape,
  /** With s = sigmoid(gate): silu'(gate) = s (1 + gate (1 - s)), written as s (1 + gate - gate s). */
  composite: (gate: Tensor, up: Tensor, grad: Tensor) =>
    scope(() => {
      const s = gate.sigmoid();
      return grad.mul(up).mul(s.mul(gate.sub(gate.mul(s)).add(1)));
    }),
  gradient: 'through-composite',
  cases: casesOver([[1], [257], [3, 768], [2, 5, 65]], (shape) => ({
    label: shapeLabel(shape),
    // Gates of scale 8 reach both of sigmoid's saturated tails.
    inputs: [
      { shape, dist: { kind: 'normal', scale: 8 } },
      { shape },
      { shape, dist: { kind: 'normal', scale: 2 } },
    ],
    params: [],
    tol: ELEMENTWISE,
  })),
});

/** The gate's gradient of `swiglu(gate, up)` for `grad`: grad · up · silu'(gate), shaped like gate. */
export function swigluGrad(gate: Tensor, up: Tensor, grad: Tensor): Tensor {
  sameBackend('swigluGrad', gate, up, grad);
  for (const t of [gate, up, grad]) assertDType('swigluGrad', t.dtype, ['f32']);
  sameShape('swigluGrad', 'gate', gate, 'up', up);
  sameShape('swigluGrad', 'gate', gate, 'grad', grad);
  return runFused(swigluGradOp, [gate, up, grad], []);
}
