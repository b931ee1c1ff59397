import { assertDType } from '../dtype';
import { add, div, mul, sqrt, sub } from '../elementwise';
import { sameBackend } from '../guards';
import { assign } from '../movement';
import { scope } from '../scope';
import { shapesEqual, showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, ELEMENTWISE, shapeLabel } from './case';
import { runFusedInPlace } from './dispatch';
import { inPlaceOp } from './op';

/** One AdamW update: bias corrections c1 = 1 - beta1^t and c2 = 1 - beta2^t are precomputed. */
export interface AdamWSpec {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Decoupled weight decay applied to this parameter (0 for norms and biases). */
  readonly weightDecay: number;
  readonly c1: number;
  readonly c2: number;
  /**
   * The gradient's factor (1 when absent): the moments take gradScale · grad. A clip's factor goes here instead of
   * into a scaled copy of every gradient.
   */
  readonly gradScale?: number;
}

/**
 * In place, with g = gradScale · grad: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²;
 * p = p (1 - lr wd) - lr (m / c1) / (sqrt(v / c2) + eps). Kernel: `adamw(param, grad, m, v, spec)`.
 */
export const adamwOp = inPlaceOp({
  name: 'adamw',
  inputs: ['param', 'grad', 'm', 'v'],
  composite: (param: Tensor, grad: Tensor, m: Tensor, v: Tensor, spec: AdamWSpec) => {
    scope(() => {
      const scale = spec.gradScale ?? 1;
      const m1 = add(mul(m, spec.beta1), mul(grad, (1 - spec.beta1) * scale));
      const v1 = add(mul(v, spec.beta2), mul(mul(grad, grad), (1 - spec.beta2) * scale * scale));
      const update = div(mul(m1, spec.lr / spec.c1), add(sqrt(mul(v1, 1 / spec.c2)), spec.eps));
      const decayed = spec.weightDecay > 0 ? mul(param, 1 - spec.lr * spec.weightDecay) : param;
      assign(m, m1);
      assign(v, v1);
      assign(param, sub(decayed, update));
    });
  },
  gradient: 'none',
  cases: [
    ...casesOver([[1], [257], [128, 512]], (shape) => ({
      label: `${shapeLabel(shape)} (param, grad, m and v after one step)`,
      inputs: [{ shape }, { shape }, { shape }, { shape, dist: { kind: 'positive' } }],
      params: [{ lr: 0.01, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, c1: 0.19, c2: 0.0199 }],
      tol: ELEMENTWISE,
    })),
    ...casesOver([[257]], (shape) => ({
      label: `${shapeLabel(shape)} with the gradient scaled by 0.3 (a clip's factor)`,
      inputs: [{ shape }, { shape }, { shape }, { shape, dist: { kind: 'positive' } }],
      params: [
        {
          lr: 0.01,
          beta1: 0.9,
          beta2: 0.99,
          eps: 1e-8,
          weightDecay: 0.1,
          c1: 0.19,
          c2: 0.0199,
          gradScale: 0.3,
        },
      ],
      tol: ELEMENTWISE,
    })),
  ],
});

/** One AdamW step of `param` in place, updating its moments `m` and `v` (all f32, one shape). */
export function adamw(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, spec: AdamWSpec): void {
  sameBackend('adamw', param, grad, m, v);
  for (const t of [param, grad, m, v]) {
    assertDType('adamw', t.dtype, ['f32']);
    if (!shapesEqual(t.shape, param.shape)) {
      throw new Error(
        `adamw: param ${showShape(param.shape)}, grad, m and v must share a shape; got ${showShape(t.shape)}`,
      );
    }
  }
  runFusedInPlace(adamwOp, [param, grad, m, v], [spec]);
}
