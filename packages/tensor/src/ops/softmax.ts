import { assertDType } from '../dtype';
import { div, exp, sub } from '../elementwise';
import { max, sum } from '../reduce';
import { scope } from '../scope';
import { normalizeAxis } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { softmaxGrad } from './softmax-grad';

/** exp(x - max) / sum(exp(x - max)) along `axis`, with primitives. */
function softmaxAlong(x: Tensor, axis: number): Tensor {
  return scope(() => {
    const e = exp(sub(x, max(x, axis, true)));
    return div(e, sum(e, axis, true));
  });
}

/** Softmax over the last axis; kernel: `softmax(x)`. */
export const softmaxOp = fusedOp({
  name: 'softmax',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor) => softmaxAlong(x, x.rank - 1),
  /** dx = y (g - sum(g y)) over the last axis. */
  gradient: {
    backward: ({ output: y, grad: g }) => [softmaxGrad(y, g)],
  },
  cases: casesOver(ROW_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape, dist: { kind: 'normal', scale: 4 } }],
    params: [],
    tol: REDUCTION,
  })),
});

/** Softmax along `axis` (fused on the last axis where the backend has a kernel). */
export function softmax(x: Tensor, axis = -1): Tensor {
  assertDType('softmax', x.dtype, ['f32']);
  const a = normalizeAxis('softmax', axis, x.rank);
  if (a !== x.rank - 1) return softmaxAlong(x, a);
  return runFused(softmaxOp, [x], []);
}
