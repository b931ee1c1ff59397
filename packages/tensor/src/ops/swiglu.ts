import { assertDType } from '../dtype';
import { mul, silu } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { swigluGrad } from './swiglu-grad';

/** silu(gate) * up, elementwise; kernel: `swiglu(gate, up)`. */
export const swigluOp = fusedOp({
  name: 'swiglu',
  inputs: ['gate', 'up'],
  outputShape: ([gate]) => gate.shape,
  composite: (gate: Tensor, up: Tensor) => scope(() => mul(silu(gate), up)),
  /** d gate = grad · up · silu'(gate) by the fused swigluGrad; d up = grad · silu(gate) is swiglu(gate, grad). */
  gradient: {
    backward: ({ inputs: [gate, up], grad, needs }) => [
      needs[0] ? swigluGrad(gate, up, grad) : undefined,
      needs[1] ? swiglu(gate, grad) : undefined,
    ],
  },
  cases: casesOver([[1], [257], [3, 768], [2, 5, 65]], (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape, dist: { kind: 'normal', scale: 3 } }, { shape }],
    params: [],
    tol: { atol: 1e-5, rtol: 1e-4 },
  })),
});

/** silu(gate) * up. */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  sameBackend('swiglu', gate, up);
  assertDType('swiglu', gate.dtype, ['f32']);
  sameShape('swiglu', 'gate', gate, 'up', up);
  return runFused(swigluOp, [gate, up], []);
}
