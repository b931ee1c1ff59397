import { scope } from '../scope';
import type { Tensor } from '../tensor';
import { crossEntropyCases, oneHot, validRows } from './cross-entropy-targets';
import { fusedOp } from './op';
import { softmax } from './softmax';

/**
 * The gradient of `softmaxCrossEntropy(logits [N, V], targets [N], ignoreIndex)` for the gradient `grad` (a scalar)
 * of its loss: grad (softmax(logits) - onehot(target)) / count on the rows that are not ignored (count of them, at
 * least 1), 0 on the others; kernel: `softmaxCrossEntropyGrad(logits, targets, grad, ignoreIndex)`. One op, so that
 * a backend writes the softmax and subtracts the targets in place instead of building the one-hot rows, the row
 * mask and four [N, V] products (the training step's language-model head). Differentiated, where ever needed,
 * through its composite.
 */
export const softmaxCrossEntropyGradOp = fusedOp({
  name: 'softmaxCrossEntropyGrad',
  inputs: ['logits', 'targets', 'grad'],
  outputShape: ([logits]) => logits.shape,
  composite: (logits: Tensor, targets: Tensor, grad: Tensor, ignoreIndex: number) =>
    scope(() => {
      const [n, v] = logits.shape;
      const valid = validRows(targets, ignoreIndex).reshape([n, 1]); // [N, 1]
      const count = valid.sum().maximum(1);
      return softmax(logits).sub(oneHot(targets, v)).mul(valid).mul(grad.div(count)); // [N, V]
    }),
  gradient: 'through-composite',
  cases: crossEntropyCases([{ shape: [], dist: { kind: 'normal', scale: 2 } }]),
});
