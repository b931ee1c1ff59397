import { ones, zeros } from '../creation';
import { assertDType } from '../dtype';
import { add, mul, rsqrt, sub } from '../elementwise';
import { sameBackend } from '../guards';
import { mean } from '../reduce';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { lastDimMatches, sumRows } from './checks';
import { runFused } from './dispatch';
import { layernormGrad } from './layernorm-grad';
import { fusedOp } from './op';

/** (x - mean) * rsqrt(var + eps) * weight + bias over the last axis; kernel: `layernorm(x, weight, bias, eps)`. */
export const layernormOp = fusedOp({
  name: 'layernorm',
  inputs: ['x', 'weight', 'bias'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor, weight: Tensor, bias: Tensor, eps: number) =>
    scope(() => {
      const centred = sub(x, mean(x, -1, true));
      const inv = rsqrt(add(mean(mul(centred, centred), -1, true), eps));
      return add(mul(mul(centred, inv), weight), bias);
    }),
  /** dx from the fused layernormGrad; dweight = sum of g · normalised x, dbias = sum of g. */
  gradient: {
    backward: ({ inputs: [x, weight], params: [eps], grad: g, needs }) => {
      const normed = (): Tensor => {
        const options = { backend: weight.backend };
        return layernorm(x, ones(weight.shape, options), zeros(weight.shape, options), eps);
      };
      return [
        needs[0] ? layernormGrad(x, weight, g, eps) : undefined,
        needs[1] ? sumRows(g.mul(normed())) : undefined,
        needs[2] ? sumRows(g) : undefined,
      ];
    },
  },
  cases: casesOver(ROW_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape }, { shape: [shape[shape.length - 1]] }, { shape: [shape[shape.length - 1]] }],
    params: [1e-5],
    tol: REDUCTION,
  })),
});

/** Layer normalisation over the last axis with weight and bias [d]. */
export function layernorm(x: Tensor, weight: Tensor, bias: Tensor, eps = 1e-5): Tensor {
  sameBackend('layernorm', x, weight, bias);
  assertDType('layernorm', x.dtype, ['f32']);
  lastDimMatches('layernorm', x, weight, 'weight');
  lastDimMatches('layernorm', x, bias, 'bias');
  return runFused(layernormOp, [x, weight, bias], [eps]);
}
