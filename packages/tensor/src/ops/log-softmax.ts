import { assertDType } from '../dtype';
import { exp, log, sub } from '../elementwise';
import { max, sum } from '../reduce';
import { scope } from '../scope';
import { normalizeAxis } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, ROW_SHAPES, shapeLabel } from './case';
import { runFused } from './dispatch';
import { fusedOp } from './op';

/** x - max - log(sum(exp(x - max))) along `axis`, with primitives. */
export function logSoftmaxAlong(x: Tensor, axis: number): Tensor {
  return scope(() => {
    const shifted = sub(x, max(x, axis, true));
    return sub(shifted, log(sum(exp(shifted), axis, true)));
  });
}

/** Log-softmax over the last axis; kernel: `logSoftmax(x)`. */
export const logSoftmaxOp = fusedOp({
  name: 'logSoftmax',
  inputs: ['x'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor) => logSoftmaxAlong(x, x.rank - 1),
  /** dx = g - softmax(x) sum(g) over the last axis, with softmax(x) = exp(y). */
  gradient: {
    backward: ({ output: y, grad: g }) => [g.sub(y.exp().mul(g.sum(-1, true)))],
  },
  cases: casesOver(ROW_SHAPES, (shape) => ({
    label: shapeLabel(shape),
    inputs: [{ shape, dist: { kind: 'normal', scale: 4 } }],
    params: [],
    tol: REDUCTION,
  })),
});

/** Log-softmax along `axis`, computed stably (x - max - log sum exp). */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  assertDType('logSoftmax', x.dtype, ['f32']);
  const a = normalizeAxis('logSoftmax', axis, x.rank);
  if (a !== x.rank - 1) return logSoftmaxAlong(x, a);
  return runFused(logSoftmaxOp, [x], []);
}
