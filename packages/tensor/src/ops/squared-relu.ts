import { assertDType } from '../dtype';
import { mul, relu } from '../elementwise';
import { scope } from '../scope';
import type { Shape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, type Distribution, ELEMENTWISE, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * ReLU² (Primer; the MLP of modded-nanogpt): max(x, 0)², elementwise; kernel:
 * `squaredRelu(x)`.
 */
export const squaredReluOp = fusedOp({
  name: 'squaredRelu',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor) =>
    scope(() => {
      const r = relu(x);
      return mul(r, r);
    }),
  /** dy/dx = 2 max(x, 0), so dx = 2 max(x, 0) g. */
  gradient: {
    backward: ({ inputs: [x], grad: g }) => [g.mul(x.relu()).mul(2)],
  },
  cases: casesOver<{ shape: Shape; dist: Distribution; values: string }, []>(
    [
      { shape: [1], dist: { kind: 'normal', scale: 3 }, values: 'normal' },
      { shape: [257], dist: { kind: 'uniform', low: -0.01, high: 0.01 }, values: 'near 0' },
      { shape: [3, 768], dist: { kind: 'normal', scale: 3 }, values: 'normal' },
      { shape: [2, 5, 65], dist: { kind: 'uniform', low: -1, high: 1 }, values: 'in [-1, 1]' },
    ],
    ({ shape, dist, values }) => ({
      label: `${shapeLabel(shape)} ${values}`,
      inputs: [{ shape, dist }],
      params: [],
      tol: ELEMENTWISE,
    }),
  ),
});

/** max(x, 0)²: ReLU squared (Primer, modded-nanogpt's MLP). */
export function squaredRelu(x: Tensor): Tensor {
  assertDType('squaredRelu', x.dtype, ['f32']);
  return runFused(squaredReluOp, [x], []);
}
