import { assertDType } from '../dtype';
import { mul } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { lastDimMatches } from './checks';
import { runFused } from './dispatch';
import { rmsNormalised } from './norm-composite';
import { fusedOp } from './op';
import { rmsnormGrad } from './rmsnorm-grad';
import { rmsnormWeightGrad } from './rmsnorm-weight-grad';

/** x [..., d] * rsqrt(mean(x^2) + eps) * weight [d]; kernel: `rmsnorm(x, weight, eps)`. */
export const rmsnormOp = fusedOp({
  name: 'rmsnorm',
  inputs: ['x', 'weight'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor, weight: Tensor, eps: number) => scope(() => mul(rmsNormalised(x, eps), weight)),
  /** dx from the fused rmsnormGrad; dweight = Σ over rows of g · rmsnorm(x, 1) from the fused rmsnormWeightGrad. */
  gradient: {
    backward: ({ inputs: [x, weight], params: [eps], grad: g, needs }) => [
      needs[0] ? rmsnormGrad(x, weight, g, eps) : undefined,
      needs[1] ? rmsnormWeightGrad(x, g, eps) : undefined,
    ],
  },
  cases: casesOver(ROW_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape }, { shape: [shape[shape.length - 1]] }],
    params: [1e-5],
    tol: REDUCTION,
  })),
});

/** RMS normalisation over the last axis, scaled by weight [d]. */
export function rmsnorm(x: Tensor, weight: Tensor, eps = 1e-5): Tensor {
  sameBackend('rmsnorm', x, weight);
  assertDType('rmsnorm', x.dtype, ['f32']);
  lastDimMatches('rmsnorm', x, weight, 'weight');
  return runFused(rmsnormOp, [x, weight], [eps]);
}
