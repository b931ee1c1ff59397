import { assertDType } from '../dtype';
import { mul, silu } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, shapeLabel } from './case';
import { sameShape } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** silu(gate) * up, elementwise; kernel: `swiglu(gate, up)`. */
export const swigluOp = fusedOp({
  name: 'swiglu',
  inputs: ['gate', 'up'],
  outputShape: ([gate]) => gate.shape,
  composite: (gate: Tensor, up: Tensor) => scope(() => mul(silu(gate), up)),
  /** d gate = g up s (1 + a (1 - s)) with s = sigmoid(gate); d up = g silu(gate). */
  gradient: {
    backward: ({ inputs: [a, up], grad: g, needs }) => {
      const s = a.sigmoid();
      // silu(a) = a s, shared by both: silu'(a) = s (1 + a (1 - s)), written as s (1 + a - a s).
      const as = a.mul(s);
      const da = needs[0] ? g.mul(up).mul(s.mul(a.sub(as).add(1))) : undefined;
      return [da, needs[1] ? g.mul(as) : undefined];
    },
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
