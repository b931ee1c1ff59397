import { full } from '../creation';
import { assertDType } from '../dtype';
import { div, mul, neg } from '../elementwise';
import { sameBackend } from '../guards';
import { sum } from '../reduce';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { crossEntropyCases, oneHot, validRows } from './cross-entropy-targets';
import { runFused } from './dispatch';
import { logSoftmaxAlong } from './log-softmax';
import { fusedOp } from './op';
import { softmaxCrossEntropyGradOp } from './softmax-cross-entropy-grad';

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
  /** d logits: one `softmaxCrossEntropyGrad`. */
  gradient: {
    backward: ({ inputs: [logits, targets], params: [ignoreIndex], grad }) => [
      runFused(softmaxCrossEntropyGradOp, [logits, targets, grad], [ignoreIndex]),
      undefined,
    ],
  },
  cases: crossEntropyCases([]),
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
