import { assertDType } from '../dtype';
import { add, mul } from '../elementwise';
import { sameBackend } from '../guards';
import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { lastDimMatches } from './checks';
import { runFused } from './dispatch';
import { layernormGrad } from './layernorm-grad';
import { layernormParamGrad } from './layernorm-param-grad';
import { layerNormalised } from './norm-composite';
import { fusedOp } from './op';

/** (x - mean) * rsqrt(var + eps) * weight + bias over the last axis; kernel: `layernorm(x, weight, bias, eps)`. */
export const layernormOp = fusedOp({
  name: 'layernorm',
  inputs: ['x', 'weight', 'bias'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor, weight: Tensor, bias: Tensor, eps: number) =>
    scope(() => add(mul(layerNormalised(x, eps), weight), bias)),
  /** dx from the fused layernormGrad; dweight = Σ g · normalised x and dbias = Σ g from one layernormParamGrad. */
  gradient: {
    backward: ({ inputs: [x, weight], params: [eps], grad: g, needs }) =>
      scope(() => {
        const params = needs[1] || needs[2] ? layernormParamGrad(x, g, eps) : undefined; // [2, d]
        const d = weight.shape;
        return [
          needs[0] ? layernormGrad(x, weight, g, eps) : undefined,
          needs[1] ? params?.slice([0, 0], [1, d[0]]).reshape(d) : undefined,
          needs[2] ? params?.slice([1, 0], [1, d[0]]).reshape(d) : undefined,
        ];
      }),
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
