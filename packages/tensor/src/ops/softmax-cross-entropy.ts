import { arange, full } from '../creation';
import { assertDType } from '../dtype';
import { cast, compare, div, mul, ne, neg } from '../elementwise';
import { sameBackend } from '../guards';
import { sum } from '../reduce';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { runFused } from './dispatch';
import { logSoftmaxAlong } from './log-softmax';
import { fusedOp } from './op';
import { softmax } from './softmax';

/** f32 [N, V] with 1 at each row's target and 0 elsewhere (all 0 for a target outside [0, V)). */
function oneHot(targets: Tensor, v: number): Tensor {
  const n = targets.shape[0];
  const vocab = arange(v, 0, 1, { backend: targets.backend, dtype: 'i32' }).reshape([1, v]); // [1, V]
  return cast(compare('eq', vocab, targets.reshape([n, 1])), 'f32'); // [N, V]
}

/** f32 [N], 1 for the rows whose target is not `ignoreIndex`. */
function validRows(targets: Tensor, ignoreIndex: number): Tensor {
  return cast(ne(targets, ignoreIndex), 'f32'); // [N]
}

/**
 * Mean over rows whose target is not `ignoreIndex` of -log softmax(logits [N, V])[target];
 * a scalar. Kernel: `softmaxCrossEntropy(logits, targets, ignoreIndex)`.
 */
export const softmaxCrossEntropyOp = fusedOp({
  name: 'softmaxCrossEntropy',
  inputs: ['logits', 'targets'],
  outputShape: () => [],
  composite: (logits: Tensor, targets: Tensor, ignoreIndex: number) =>
    scope(() => {
      const picked = sum(mul(logSoftmaxAlong(logits, 1), oneHot(targets, logits.shape[1])), -1); // [N]
      const valid = validRows(targets, ignoreIndex); // [N]
      const count = full([], 1, { backend: logits.backend }).maximum(sum(valid));
      return neg(div(sum(mul(picked, valid)), count));
    }),
  /** d logits = g (softmax(logits) - onehot(target)) / count on rows that are not ignored. */
  gradient: {
    backward: ({ inputs: [logits, targets], params: [ignoreIndex], grad: g }) => {
      const [n, v] = logits.shape;
      const valid = validRows(targets, ignoreIndex).reshape([n, 1]); // [N, 1]
      const count = sum(valid).maximum(1);
      const probs = softmax(logits); // [N, V]
      return [probs.sub(oneHot(targets, v)).mul(valid).mul(g.div(count)), undefined];
    },
  },
  cases: casesOver(
    [
      { n: 1, v: 1, ignore: -100, outOfRange: false },
      { n: 5, v: 7, ignore: -100, outOfRange: false },
      { n: 12, v: 65, ignore: 3, outOfRange: false },
      { n: 64, v: 512, ignore: -1, outOfRange: false },
      { n: 4, v: 32_000, ignore: -100, outOfRange: false },
      { n: 9, v: 5, ignore: -100, outOfRange: true },
    ],
    ({ n, v, ignore, outOfRange }) => ({
      label: `${shapeLabel([n, v])} ignoring ${ignore}${outOfRange ? ' with out-of-range targets' : ''}`,
      inputs: [
        { shape: [n, v], dist: { kind: 'normal', scale: 3 } },
        {
          shape: [n],
          dist: { kind: 'ints', low: ignore === -1 || outOfRange ? -1 : 0, high: outOfRange ? v : v - 1 },
        },
      ],
      params: [ignore],
      tol: REDUCTION,
    }),
  ),
});

/**
 * Mean cross-entropy of logits [N, V] against i32 targets [N]; rows whose target equals
 * `ignoreIndex` do not count; a target outside [0, V) that is not ignored counts with loss 0.
 * Returns a scalar (0 when every row is ignored).
 */
export function softmaxCrossEntropy(logits: Tensor, targets: Tensor, ignoreIndex = -100): Tensor {
  sameBackend('softmaxCrossEntropy', logits, targets);
  assertDType('softmaxCrossEntropy (logits)', logits.dtype, ['f32']);
  assertDType('softmaxCrossEntropy (targets)', targets.dtype, ['i32']);
  if (logits.rank !== 2 || targets.rank !== 1 || targets.shape[0] !== logits.shape[0]) {
    throw new Error(
      `softmaxCrossEntropy: expected logits [N, V] and targets [N], got ${showShape(logits.shape)} and ${showShape(targets.shape)}`,
    );
  }
  return runFused(softmaxCrossEntropyOp, [logits, targets], [ignoreIndex]);
}
