import { assertDType } from '../dtype';
import { gelu, mul } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { geluGrad } from './gelu-grad';
import { fusedOp } from './op';

/**
 * gelu(gate) · up, elementwise, GELU in its tanh form: the gated feed-forward of Gemma and
 * T5 v1.1 (GeGLU); kernel: `geglu(gate, up)`.
 */
export const gegluOp = fusedOp({
  name: 'geglu',
  inputs: ['gate', 'up'],
  outputShape: ([gate]) => gate.shape,
  composite: (gate: Tensor, up: Tensor) => scope(() => mul(gelu(gate), up)),
  /** d gate = gelu'(gate) · g up (the geluGrad kernel); d up = g gelu(gate). */
  gradient: {
    backward: ({ inputs: [gate, up], grad: g, needs }) => [
      needs[0] ? geluGrad(gate, g.mul(up)) : undefined,
      needs[1] ? g.mul(gate.gelu()) : undefined,
    ],
  },
  cases: casesOver([[1], [257], [3, 768], [2, 5, 65]], (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape, dist: { kind: 'normal', scale: 3 } }, { shape }],
    params: [],
    tol: ELEMENTWISE,
  })),
});

/** gelu(gate) · up (GeGLU), GELU in its tanh form; gate and up must share a shape. */
export function geglu(gate: Tensor, up: Tensor): Tensor {
  sameBackend('geglu', gate, up);
  assertDType('geglu', gate.dtype, ['f32']);
  assertDType('geglu', up.dtype, ['f32']);
  sameShape('geglu', 'gate', gate, 'up', up);
  return runFused(gegluOp, [gate, up], []);
}
