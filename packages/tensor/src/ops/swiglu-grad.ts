import { assertDType } from '../dtype';
import { sameBackend } from '../guards';
import { concat, unsqueeze } from '../movement';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * Both input gradients of `swiglu(gate, up)` for the output gradient `grad`, packed as
 * [2, ...shape]: d gate = grad · up · silu'(gate) first, then d up = grad · silu(gate). Kernel:
 * `swigluGrad(gate, up, grad)`. One pass over the three inputs instead of seven primitive ones
 * (the llama feed-forward's backward in training runs it on every layer's [B, T, hidden]
 * activations); one op returns one tensor, so the two halves share it and swiglu's rule slices
 * them out (two copies, still cheaper than the primitives). It runs inside that rule, so autograd differentiates it (never needed in training)
 * through its composite.
 */
export const swigluGradOp = fusedOp({
  name: 'swigluGrad',
  inputs: ['gate', 'up', 'grad'],
  outputShape: ([gate]) => [2, ...gate.shape],
  /** With s = sigmoid(gate): silu(gate) = gate s and silu'(gate) = s (1 + gate (1 - s)), written as s (1 + gate - gate s). */
  composite: (gate: Tensor, up: Tensor, grad: Tensor) =>
    scope(() => {
      const s = gate.sigmoid();
      const silu = gate.mul(s);
      const dGate = grad.mul(up).mul(s.mul(gate.sub(silu).add(1)));
      return concat([unsqueeze(dGate, 0), unsqueeze(grad.mul(silu), 0)], 0); // [2, ...shape]
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

/** The gradients of `swiglu(gate, up)` for `grad`, packed [2, ...shape]: d gate, then d up. */
export function swigluGrad(gate: Tensor, up: Tensor, grad: Tensor): Tensor {
  sameBackend('swigluGrad', gate, up, grad);
  for (const t of [gate, up, grad]) assertDType('swigluGrad', t.dtype, ['f32']);
  sameShape('swigluGrad', 'gate', gate, 'up', up);
  sameShape('swigluGrad', 'gate', gate, 'grad', grad);
  return runFused(swigluGradOp, [gate, up, grad], []);
}
