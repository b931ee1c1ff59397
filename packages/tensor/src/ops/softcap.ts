import { assertDType } from '../dtype';
import { div, mul, tanh } from '../elementwise';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/**
 * Logit soft-capping (Gemma 2): cap · tanh(x / cap), elementwise, squashing x smoothly into
 * (-cap, cap); kernel: `softcap(x, cap)`.
 */
export const softcapOp = fusedOp({
  name: 'softcap',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor, cap: number) => scope(() => mul(tanh(div(x, cap)), cap)),
  /** dy/dx = 1 - tanh²(x / cap) = 1 - (y / cap)², so dx = g (1 - (y / cap)²). */
  gradient: {
    backward: ({ output: y, params: [cap], grad: g }) => {
      const t = y.div(cap);
      return [g.mul(t.mul(t).neg().add(1))];
    },
  },
  cases: casesOver(
    [
      { shape: [1], cap: 30 },
      { shape: [257], cap: 5 },
      { shape: [3, 768], cap: 30 },
      { shape: [2, 5, 65], cap: 0.5 },
    ],
    ({ shape, cap }) => ({
      label: `${shapeLabel(shape)} cap ${cap}`,
      inputs: [{ shape, dist: { kind: 'normal', scale: 2 * cap } }],
      params: [cap],
      tol: ELEMENTWISE,
    }),
  ),
});

/** cap · tanh(x / cap): soft-caps x into (-cap, cap) (Gemma 2's attention and final logits). */
export function softcap(x: Tensor, cap: number): Tensor {
  assertDType('softcap', x.dtype, ['f32']);
  if (!(Number.isFinite(cap) && cap > 0)) {
    throw new Error(`softcap: cap must be a positive finite number, got ${cap}; pass e.g. 30 or 50`);
  }
  return runFused(softcapOp, [x], [cap]);
}
