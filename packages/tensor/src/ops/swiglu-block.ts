import { assertDType } from '../dtype';
import { add } from '../elementwise';
import { sameBackend } from '../guards';
import { matmul } from '../matmul';
import { scope } from '../scope';
import { showShape } from '../shape';
import type { Tensor } from '../tensor';
import { casesOver, REDUCTION, shapeLabel } from './case';
import { lastDimMatches } from './checks';
import { runFused } from './dispatch';
import { fusedOp } from './op';
import { rmsnorm } from './rmsnorm';
import { swiglu } from './swiglu';

/**
 * x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ with n = rmsnorm(x, normWeight, eps): a pre-norm SwiGLU feed-forward
 * and its residual, one call (llama's second half of a block). x [..., dim], normWeight [dim], w1 and w3
 * [hidden, dim], w2 [dim, hidden], weights stored [out, in]; kernel:
 * `swigluBlock(x, normWeight, w1, w3, w2, eps)`.
 */
export const swigluBlockOp = fusedOp({
  name: 'swigluBlock',
  inputs: ['x', 'normWeight', 'w1', 'w3', 'w2'],
  outputShape: ([x]) => x.shape,
  composite: (x: Tensor, normWeight: Tensor, w1: Tensor, w3: Tensor, w2: Tensor, eps: number) =>
    scope(() => {
      const n = rmsnorm(x, normWeight, eps); // [..., dim]
      const h = swiglu(matmul(n, w1, { transB: true }), matmul(n, w3, { transB: true })); // [..., hidden]
      return add(x, matmul(h, w2, { transB: true })); // [..., dim]
    }),
  gradient: 'through-composite',
  cases: casesOver(
    [
      { rows: [1, 1], dim: 4, hidden: 4 },
      { rows: [1, 1], dim: 288, hidden: 768 },
      { rows: [2, 1], dim: 12, hidden: 20 },
      { rows: [3], dim: 7, hidden: 9 },
      { rows: [1, 5], dim: 64, hidden: 172 },
    ],
    ({ rows, dim, hidden }) => ({
      label: `${shapeLabel([...rows, dim])} hidden ${hidden}`,
      inputs: [
        { shape: [...rows, dim] },
        { shape: [dim], dist: { kind: 'positive' } },
        { shape: [hidden, dim], dist: { kind: 'normal', scale: 0.3 } },
        { shape: [hidden, dim], dist: { kind: 'normal', scale: 0.3 } },
        { shape: [dim, hidden], dist: { kind: 'normal', scale: 0.3 } },
      ],
      params: [1e-5],
      tol: REDUCTION,
    }),
  ),
});

/**
 * The pre-norm SwiGLU feed-forward with its residual, x + swiglu(n W1ᵀ, n W3ᵀ) W2ᵀ where
 * n = rmsnorm(x, normWeight, eps): x [..., dim], normWeight [dim], w1 and w3 [hidden, dim], w2 [dim, hidden].
 */
export function swigluBlock(
  x: Tensor,
  normWeight: Tensor,
  w1: Tensor,
  w3: Tensor,
  w2: Tensor,
  eps = 1e-5,
): Tensor {
  sameBackend('swigluBlock', x, normWeight, w1, w3, w2);
  for (const t of [x, normWeight, w1, w3, w2]) assertDType('swigluBlock', t.dtype, ['f32']);
  if (x.rank < 2) {
    throw new Error(
      `swigluBlock: expected x [..., rows, dim] with at least 2 axes, got ${showShape(x.shape)}`,
    );
  }
  lastDimMatches('swigluBlock', x, normWeight, 'normWeight');
  const dim = x.shape[x.rank - 1];
  const hidden = w1.shape[0];
  const expected: [string, Tensor, number, number][] = [
    ['w1', w1, hidden, dim],
    ['w3', w3, hidden, dim],
    ['w2', w2, dim, hidden],
  ];
  for (const [name, w, rows, cols] of expected) {
    if (w.rank !== 2 || w.shape[0] !== rows || w.shape[1] !== cols) {
      throw new Error(
        `swigluBlock: ${name} must have shape [${rows}, ${cols}] (w1 and w3 [hidden, dim], w2 [dim, hidden], ` +
          `dim ${dim} from x ${showShape(x.shape)}, hidden from w1), got ${showShape(w.shape)}`,
      );
    }
  }
  return runFused(swigluBlockOp, [x, normWeight, w1, w3, w2], [eps]);
}
