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
  /** Both gradients from one pass (the fused swigluGrad), sliced out of its packed [2, ...shape] result. */
  gradient: {
    backward: ({ inputs: [gate, up], grad, needs }) =>
      scope(() => {
        const packed = swigluGrad(gate, up, grad); // [2, ...shape]: d gate, d up
        return needs.map((needed, i) => (needed ? packed.slice([i], [1]).reshape(gate.shape) : undefined));
      }),
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
